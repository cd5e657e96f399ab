-- Orders are read from memory (order.View), by id only: no query reads these indexes.
DROP INDEX IF EXISTS orders_by_status;
DROP INDEX IF EXISTS orders_by_pet;
DROP INDEX IF EXISTS orders_by_ship_date;

