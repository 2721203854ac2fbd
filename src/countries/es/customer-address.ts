/**
 * The customer's address as `customer_context` gives it: written in a TicketBAI record
 * (es-ticketbai/xml.ts, checked by es-ticketbai/foral-rules.ts) and printed on a VERI*FACTU
 * or SII full invoice's receipt (./receipt.ts: RD 1619/2012 art. 6.1.e), whose records have
 * no field for it.
 */

/** The first of these fields that holds a non-blank string, trimmed (also TicketBAI's customer name, es-ticketbai/xml.ts). */
export const firstText = (ctx: Record<string, unknown>, ...keys: string[]): string | null => {
  for (const k of keys) {
    const v = ctx[k];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return null;
};

/**
 * The customer's address as `IDDestinatario` writes it (`Direccion` TextMax250Type,
 * `CodigoPostal` TextMax20Type), from `customer_context`:
 * - `address` a string: Direccion as given;
 * - `address` an object (as other countries' guides send it): `street` (or `line`,
 *   `line1`), then `city` and `province`, joined by ", ";
 * - `postal_code` (or `zip`), at the top level or inside the address object.
 * Null where nothing is given. TicketBAI checks the lengths (es-ticketbai/foral-rules.ts
 * `checkCustomerAddress`).
 */
export function customerAddressOf(ctx: Record<string, unknown>): { address: string | null; postalCode: string | null } {
  const raw = ctx.address;
  const nested = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  const address =
    nested === null
      ? firstText(ctx, 'address')
      : [firstText(nested, 'street', 'line', 'line1'), firstText(nested, 'city'), firstText(nested, 'province')]
          .filter((p): p is string => p !== null)
          .join(', ') || null;
  const postalCode = firstText(ctx, 'postal_code', 'zip') ?? (nested === null ? null : firstText(nested, 'postal_code', 'zip'));
  return { address, postalCode };
}
