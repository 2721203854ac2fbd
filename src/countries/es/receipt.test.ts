/**
 * What a Spanish full invoice prints of its recipient and operation (RD 1619/2012 art.
 * 6.1.d-f: name, NIF or foreign id, domicile; the description of the operations), built by
 * the real plug-ins and drawn by the shared model: VERI*FACTU and the SII from the draft
 * (their records name no address), TicketBAI from its signed record. A simplified invoice
 * prints no recipient unless its record names one.
 */
import { describe, expect, it } from 'vitest';
import { buildReceipt, type ReceiptSource } from '../../receipts/model.ts';
import { renderText } from '../../receipts/text.ts';
import { renderReceipt } from '../../receipts/render.ts';
import { pdfText, squeeze } from '../../receipts/test-tools.ts';
import type { FiscalSystem, SystemKey, TransactionDraft } from '../types.ts';
import { NOW, SOFTWARE, draft, location, validatedBuild } from '../shared/test-fixtures.ts';
import { verifactu } from '../es-verifactu/index.ts';
import { sii } from '../es-sii/index.ts';
import { ticketBai } from '../es-ticketbai/index.ts';

const SYSTEMS: Record<'es-verifactu' | 'es-sii' | 'es-ticketbai', FiscalSystem> = { 'es-verifactu': verifactu, 'es-sii': sii, 'es-ticketbai': ticketBai };

/** The sale built by the plug-in and the receipt source the service would draw it from. */
function built(key: keyof typeof SYSTEMS, over: Partial<TransactionDraft>): ReceiptSource {
  const system = SYSTEMS[key];
  const loc = location(key as SystemKey);
  const { tx, record } = validatedBuild(system, loc, draft(over));
  return {
    transaction: {
      id: 'tx', type: tx.type, environment: 'live', country: 'ES', created_at: NOW, fiscal_id: record.fiscalId,
      document_number: record.documentNumber ?? null, normalized: tx, render_hints: record.renderHints, record: record.body,
    },
    location: { name: 'Shop', address: null, tax_id: loc.tax_id, legal_name: null },
    system,
    software: SOFTWARE,
  };
}
const print = (src: ReceiptSource, lang: 'es' | 'en' = 'es') => renderText(buildReceipt(src, lang), 80);
/** The text with every run of white space one space: a wrapped line is found whole. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

const CUSTOMER = { nif: 'B64717838', name: 'Cliente Ejemplo SA', address: 'Calle Mayor 5, Donostia', postal_code: '20001' };

describe('VERI*FACTU', () => {
  it('a full invoice (F1) prints the recipient, its NIF and its domicile as customer_context gives it, and the given description', () => {
    const src = built('es-verifactu', { customer_context: CUSTOMER, metadata: { description: 'Servicio de catering 12/01' } });
    expect(flat(print(src))).toContain(
      ' Factura n.º A-1 Destinatario: Cliente Ejemplo SA NIF destinatario: B64717838 Domicilio destinatario: Calle Mayor 5, Donostia, 20001 Descripción: Servicio de catering 12/01 -----',
    );
    expect(flat(print(src, 'en'))).toContain(' Customer: Cliente Ejemplo SA Customer tax id: B64717838 Customer address: Calle Mayor 5, Donostia, 20001 Description: Servicio de catering 12/01 -----');
  });

  it('an address object (street, city, province; postal code inside) prints as TicketBAI writes it', () => {
    const src = built('es-verifactu', { customer_context: { nif: 'B64717838', name: 'Cliente', address: { street: 'Gran Vía 1', city: 'Madrid', postal_code: '28013' } } });
    expect(flat(print(src))).toContain(' NIF destinatario: B64717838 Domicilio destinatario: Gran Vía 1, Madrid, 28013 -----');
  });

  it('without an address nor description: name and NIF only; the lines carry the description', () => {
    const text = print(built('es-verifactu', { customer_context: { nif: 'B64717838', name: 'Cliente Ejemplo SA' } }));
    expect(text).toContain('\nDestinatario: Cliente Ejemplo SA\nNIF destinatario: B64717838\n-----');
    expect(text).not.toMatch(/Domicilio|Descripción/);
  });

  it('a simplified invoice (F2) names no recipient (its record names none), even with an address given; a given description prints', () => {
    const text = print(built('es-verifactu', { customer_context: { name: 'Juan', address: 'Calle Mayor 5' }, metadata: { description: 'Menú del día' } }));
    expect(text).toContain('Factura simplificada');
    expect(text).not.toMatch(/Destinatario|Domicilio/);
    expect(text).toContain('\nDescripción: Menú del día\n');
  });

  it('PDF: the recipient and its domicile are printed', async () => {
    const src = built('es-verifactu', { customer_context: CUSTOMER });
    const pdf = squeeze(pdfText((await renderReceipt(src, { format: 'pdf', width: 80, lang: 'es' })).body as Buffer));
    expect(pdf).toContain(squeeze('Domicilio destinatario: Calle Mayor 5, Donostia, 20001'));
    expect(pdf).toContain(squeeze('NIF destinatario: B64717838'));
  });
});

describe('SII', () => {
  const COUNTERPARTY = { counterparty_nif: 'B64717838', counterparty_name: 'Cliente Ejemplo SA' };

  it('a full invoice (F1) prints the Contraparte with the domicile customer_context gives, and the given DescripcionOperacion', () => {
    const text = print(built('es-sii', { customer_context: { address: 'Calle Mayor 5, Donostia', postal_code: '20001' }, metadata: { ...COUNTERPARTY, description: 'Alquiler enero' } }));
    expect(flat(text)).toContain(' Destinatario: Cliente Ejemplo SA NIF destinatario: B64717838 Domicilio destinatario: Calle Mayor 5, Donostia, 20001 Descripción: Alquiler enero -----');
  });

  it('a foreign counterparty prints its id; no address given, none printed; the description made from the lines is not repeated', () => {
    const text = print(built('es-sii', { metadata: { counterparty_name: 'Beispiel GmbH', counterparty_id_type: '02', counterparty_country: 'DE', counterparty_id: 'DE123456789' } }));
    expect(text).toContain('\nDestinatario: Beispiel GmbH\nId. destinatario: DE DE123456789\n-----');
    expect(text).not.toMatch(/Domicilio|Descripción/);
  });

  it('a simplified invoice (F2) names no recipient', () => {
    const text = print(built('es-sii', { customer_context: { name: 'Juan', address: 'Calle Mayor 5' }, metadata: { simplified: true } }));
    expect(text).toContain('Factura simplificada');
    expect(text).not.toMatch(/Destinatario|Domicilio/);
  });
});

describe('TicketBAI: the recipient as the signed record names it', () => {
  it('a full invoice (F1) prints IDDestinatario: name, NIF, Direccion and CodigoPostal; and DescripcionFactura when given', () => {
    const src = built('es-ticketbai', { customer_context: CUSTOMER, metadata: { description: 'Reparación & revisión' } });
    expect(src.transaction.record).toContain('<Direccion>Calle Mayor 5, Donostia</Direccion>');
    expect(flat(print(src))).toContain(
      ' Destinatario: Cliente Ejemplo SA NIF destinatario: B64717838 Domicilio destinatario: Calle Mayor 5, Donostia, 20001 Descripción: Reparación & revisión -----',
    );
  });

  it('prints what the signed record says, not what the draft says now', () => {
    const src = built('es-ticketbai', { customer_context: { nif: 'B64717838', name: 'Cliente' } });
    // The record as signed names one customer; a draft that says otherwise changes nothing.
    const changed = { ...src, transaction: { ...src.transaction, normalized: { ...src.transaction.normalized, customer_context: { nif: 'A39200019', name: 'Otro Cliente SL', address: 'Otra 1' } } } };
    const text = print(changed);
    expect(text).toContain('\nDestinatario: Cliente\nNIF destinatario: B64717838\n-----');
    expect(text).not.toMatch(/A39200019|Otro Cliente|Otra 1|Domicilio/);
  });

  it('a foreign customer prints its IDOtro (country and id)', () => {
    const text = print(built('es-ticketbai', { customer_context: { tax_id: 'DE123456789', name: 'Beispiel GmbH', country: 'DE', address: 'Hauptstr. 1, Berlin' } }));
    expect(text).toContain('\nDestinatario: Beispiel GmbH\nId. destinatario: DE DE123456789\nDomicilio destinatario: Hauptstr. 1, Berlin\n');
  });

  it('a simplified invoice prints no recipient, unless its record names one (the customer gave a tax id)', () => {
    const plain = print(built('es-ticketbai', {}));
    expect(plain).toContain('Factura simplificada');
    expect(plain).not.toMatch(/Destinatario|Descripción/);
    const named = print(built('es-ticketbai', { customer_context: { nif: 'B64717838', name: 'Cliente Ejemplo SA', postal_code: '20001' }, metadata: { invoice_type: 'F2' } }));
    expect(named).toContain('Factura simplificada');
    expect(named).toContain('\nDestinatario: Cliente Ejemplo SA\nNIF destinatario: B64717838\nDomicilio destinatario: 20001\n');
  });

  it('PDF: the recipient and its domicile are printed', async () => {
    const src = built('es-ticketbai', { customer_context: CUSTOMER });
    const pdf = squeeze(pdfText((await renderReceipt(src, { format: 'pdf', width: 80, lang: 'es' })).body as Buffer));
    expect(pdf).toContain(squeeze('Destinatario: Cliente Ejemplo SA'));
    expect(pdf).toContain(squeeze('Domicilio destinatario: Calle Mayor 5, Donostia, 20001'));
  });
});
