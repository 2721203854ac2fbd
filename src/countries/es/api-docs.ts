/** Documentation the three Spanish systems share (their api-docs.ts files): the tax and rate rules, the line surcharge. */
import { str, type JsonSchema } from '../shared/api-docs-parts.ts';
import { RATES, ratesText } from './tax.ts';

/** `country_config.tax` (./tax.ts): VERI*FACTU takes the three, TicketBAI and SII IVA only. */
export const taxConfigDoc = (all: boolean): JsonSchema =>
  all
    ? str(`the indirect tax the location charges: iva (default; rates ${ratesText(RATES.iva)}), igic (Canary Islands; ${ratesText(RATES.igic)}) or ipsi (Ceuta, Melilla; ${ratesText(RATES.ipsi)}), written in DetalleDesglose/Impuesto`, { enum: ['iva', 'igic', 'ipsi'], default: 'iva' })
    : str(`iva only (the default): IGIC and IPSI locations use verifactu; tax_rate must be an IVA rate (${ratesText(RATES.iva)})`, { enum: ['iva'], default: 'iva' });

/** The line surcharge (./surcharge.ts): recargo de equivalencia. */
export const SPAIN_ITEM_PROPERTIES: Record<string, JsonSchema> = {
  surcharge_rate: {
    type: 'number',
    description:
      'recargo de equivalencia (Ley 37/1992 arts. 154-163) on a sale of goods to a retailer in that regime, in percent, paired with the IVA rate: ' +
      '5.2 or 1.75 (tobacco) with 21, 1.4 with 10, 0.5 with 4, 0.62 or 0.5 with 5, 1 with 7.5, 0.26 with 2, 0 with 0; IVA only, not on an exempt line. ' +
      'Guide form: hundredths of a percent (520).',
  },
  surcharge_amount: {
    type: 'integer',
    description:
      'minor units, round-half-up(quantity × unit_price × surcharge_rate / 100); computed when left out. Not part of the line\'s total_amount ' +
      '(net + tax) but of the request\'s: total_amount = pretax_amount + tax_amount + the lines\' surcharge_amount.',
  },
};
