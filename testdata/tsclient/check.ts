// A client program against the TypeScript types openapi-typescript generates from openapi.yaml
// (openapi.gen.ts, made by `make tsclient-check`), compiled with `tsc --strict`. It fails to
// compile when the document stops giving client authors what this uses: Order's fields
// required (not optional), the served document as a string, an Error for every other answer
// (the default response).
import createClient from "openapi-fetch";
import type { components, paths } from "./openapi.gen";

type Order = components["schemas"]["Order"];
type Pet = components["schemas"]["Pet"];
type ApiError = components["schemas"]["Error"];

// Every field of an Order is there: no `?`, no `!`, no undefined checks.
export function describeOrder(o: Order): string {
  const next: number = o.id + 1;
  const pet: number = o.petId + 0;
  const units: number = o.quantity * 2;
  const shipped: Date = new Date(o.shipDate);
  const complete: boolean = o.complete;
  const status: "pending" | "shipped" | "cancelled" = o.status;
  return `${next} ${pet} ${units} ${shipped.toISOString()} ${complete} ${status}`;
}

export function describePet(p: Pet): string {
  return `${p.id + 0} ${p.name.toUpperCase()} ${p.status.length}`;
}

// The served document is YAML text: a string, never an object to parse as JSON.
type Document = paths["/openapi.yaml"]["get"]["responses"][200]["content"]["application/yaml"];
export function documentVersion(doc: Document): string {
  return doc.split("\n")[0] ?? "";
}

// Every operation has a default response, and it is an Error.
type ListDefault = paths["/store/orders"]["get"]["responses"]["default"]["content"]["application/json"];
type CancelDefault = paths["/store/orders/{orderId}"]["delete"]["responses"]["default"]["content"]["application/json"];
type PetDefault = paths["/pets/{petId}"]["get"]["responses"]["default"]["content"]["application/json"];
type DocumentDefault = paths["/openapi.yaml"]["get"]["responses"]["default"]["content"]["application/json"];
export function describeError(e: ListDefault | CancelDefault | PetDefault | DocumentDefault): string {
  const same: ApiError = e;
  const status: number = same.status;
  switch (same.code) {
    case "not_found":
    case "method_not_allowed":
      return `${status} ${same.code}: the request names no operation: ${same.message}`;
    default:
      return `${status} ${same.code}: ${same.message}`;
  }
}

// The same through openapi-fetch: its data and error are the types above.
const client = createClient<paths>({ baseUrl: "/v1" });

export async function listOrders(key: string): Promise<string[]> {
  const { data, error, response } = await client.GET("/store/orders", {
    headers: { Authorization: `Bearer ${key}` },
  });
  if (error !== undefined) {
    const requestId: string = response.headers.get("X-Request-Id") ?? "";
    return [`${describeError(error)} (request ${requestId})`];
  }
  return data.map(describeOrder);
}

export async function fetchDocument(): Promise<string> {
  const { data, error } = await client.GET("/openapi.yaml", { parseAs: "text" });
  if (error !== undefined) {
    return describeError(error);
  }
  return documentVersion(data);
}

export async function cancelOrder(key: string, orderId: number): Promise<string> {
  const { error } = await client.DELETE("/store/orders/{orderId}", {
    params: { path: { orderId } },
    headers: { Authorization: `Bearer ${key}` },
  });
  return error === undefined ? `cancelled ${orderId}` : describeError(error);
}
