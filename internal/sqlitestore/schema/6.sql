-- The log is written in the statement of each change, whoever makes it; an UPDATE records
-- only where a column changed, and the status says which event it is. An id is the newest
-- ever given plus one, or, when that is behind the clock, the clock's milliseconds since 1970
-- times 1,000 (nextEventID): a file restored from a backup gives ids past every one its lost
-- history gave. julianday, not unixepoch: every SQLite an outside writer may use has it.
DROP TRIGGER IF EXISTS orders_insert_records_event;
DROP TRIGGER IF EXISTS orders_update_records_event;
CREATE TRIGGER orders_insert_records_event AFTER INSERT ON orders
BEGIN
	INSERT INTO order_events (id, type, time, order_id, pet_id, quantity, ship_date, complete, status)
	VALUES (max((SELECT max(coalesce(max(id), 0), (SELECT last_dropped FROM order_events_cut)) FROM order_events) + 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) * 1000), 'order.created', strftime('%Y-%m-%dT%H:%M:%f000000Z', 'now'),
		NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status);
END;
CREATE TRIGGER orders_update_records_event AFTER UPDATE ON orders
WHEN (OLD.id, OLD.pet_id, OLD.quantity, OLD.ship_date, OLD.complete, OLD.status)
	IS NOT (NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status)
BEGIN
	INSERT INTO order_events (id, type, time, order_id, pet_id, quantity, ship_date, complete, status)
	VALUES (max((SELECT max(coalesce(max(id), 0), (SELECT last_dropped FROM order_events_cut)) FROM order_events) + 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) * 1000),
		CASE WHEN NEW.status IS OLD.status THEN 'order.updated'
			WHEN NEW.status = 'cancelled' THEN 'order.cancelled'
			WHEN NEW.status = 'shipped' THEN 'order.shipped'
			ELSE 'order.updated' END,
		strftime('%Y-%m-%dT%H:%M:%f000000Z', 'now'),
		NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status);
END;
