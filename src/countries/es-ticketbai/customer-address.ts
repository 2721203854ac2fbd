/**
 * The customer's address in a TicketBAI record (read by xml.ts, checked by metadata.ts
 * through ./foral-rules.ts).
 */

const text = (ctx: Record<string, unknown>, ...keys: string[]): string | null => {
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
 * Null where nothing is given. metadata.ts checks the lengths (./foral-rules.ts
 * `checkCustomerAddress`).
 */
export function customerAddressOf(ctx: Record<string, unknown>): { address: string | null; postalCode: string | null } {
  const raw = ctx.address;
  const nested = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  const address =
    nested === null
      ? text(ctx, 'address')
      : [text(nested, 'street', 'line', 'line1'), text(nested, 'city'), text(nested, 'province')]
          .filter((p): p is string => p !== null)
          .join(', ') || null;
  const postalCode = text(ctx, 'postal_code', 'zip') ?? (nested === null ? null : text(nested, 'postal_code', 'zip'));
  return { address, postalCode };
}
