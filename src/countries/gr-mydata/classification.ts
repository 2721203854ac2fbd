/**
 * myDATA code lists we map the canonical transaction onto: VAT category, VAT exemption
 * cause, payment method, invoice type and income classification (E3). Codes are the
 * ones of SimpleTypes-v1.0.12.xsd / InvoicesDoc-v1.0.12.xsd (schemas/gr/mydata/); their
 * meanings are AADE's code tables as firebed/aade-mydata documents them
 * (docs/appendix/vat-categories.md, vat-exemption-categories.md, payment-methods.md,
 * income-classifications.md). docs/decisions.md "Greece: the InvoicesDoc" gives the
 * choices where the canonical request says less than myDATA needs.
 */
import { EU_MEMBER_STATES } from '../shared/vat-prefixes.ts';

/**
 * vatCategory by rate (percent). 9 and 10 (3 % and 4 % of art. 31 law 5057/2023, the
 * islands' reduced rates) are not reachable from a rate alone: 4 % maps to 6 (the
 * general 4 %), 3 % exists only as category 9. 8 ("records without VAT": payroll,
 * depreciation) is not a sale.
 */
export const VAT_CATEGORY_BY_RATE: ReadonlyMap<number, number> = new Map([
  [24, 1],
  [13, 2],
  [6, 3],
  [17, 4],
  [9, 5],
  [4, 6],
  [0, 7],
  [3, 9],
]);

/**
 * The rates a Greek line may carry, for the 400 message: "24, 13, 6, 17, 9, 4, 3 or 0",
 * each written by `rate` (the guide form says them in hundredths of a percent).
 */
export const greekRatesText = (rate: (percent: number) => string = String): string => {
  const r = [...VAT_CATEGORY_BY_RATE.keys()].filter((x) => x !== 0).map((x) => rate(x));
  return `${r.join(', ')} or ${rate(0)}`;
};

/** vatCategory 7 (0 %, "Άνευ ΦΠΑ"): the line must then name its exemption cause. */
export const VAT_CATEGORY_EXEMPT = 7;

export const vatCategoryOf = (rate: number): number | undefined => VAT_CATEGORY_BY_RATE.get(rate);

/** vatExemptionCategory: 1..31 (VatExemptionType), e.g. 27 "other VAT exemptions", 28 tax free. */
export const VAT_EXEMPTION_MIN = 1;
export const VAT_EXEMPTION_MAX = 31;

/**
 * paymentMethodDetails/type (1..8):
 * 1 domestic business payment account, 2 foreign business payment account, 3 cash,
 * 4 cheque, 5 on credit, 6 web banking, 7 POS / e-POS, 8 IRIS instant payments.
 * The canonical `payment_method` says less than that: a transfer is a payment into the
 * merchant's business account (1); `other` is settled outside cash, card and transfer,
 * of which "on credit" (5) is the one that does not misstate a payment received.
 * `metadata.payment_type` overrides.
 */
export const PAYMENT_TYPE: Readonly<Record<'cash' | 'card' | 'transfer' | 'other', number>> = {
  cash: 3,
  card: 7,
  transfer: 1,
  other: 5,
};
export const PAYMENT_TYPE_MAX = 8;

/**
 * Invoice types a sale may take, and those of a refund or void (credit documents). 1.2 / 2.2
 * (intra-Community supply of goods / services) and 1.3 / 2.3 (third countries) are the
 * invoices to a foreign business: AADE refuses a 1.1 or 2.1 whose counterpart is not Greek
 * (error 242, "Counterpart's country for this invoice type must be Greece").
 */
export const SALE_TYPES = ['11.1', '11.2', '11.3', '1.1', '1.2', '1.3', '2.1', '2.2', '2.3'] as const;
export const CREDIT_TYPES = ['11.4', '5.1', '5.2'] as const;
export type SaleType = (typeof SALE_TYPES)[number];
export type CreditType = (typeof CREDIT_TYPES)[number];
export type MyDataInvoiceType = SaleType | CreditType;

/** Retail documents (category 11): no counterpart ("μη αντικριζόμενα"). */
export const isRetail = (t: string): boolean => t.startsWith('11.');
/** Documents addressed to a business counterpart, which must then be named. */
export const needsCounterpart = (t: string): boolean => !isRetail(t);
/** A services document: its income is category1_3. */
const isServices = (t: string): boolean => t === '11.2' || t.startsWith('2.');

/**
 * Where the counterpart of an invoice type must be (AADE's ERP API documentation, error
 * table: 242 "Counterpart's country for this invoice type must be Greece", 243 "… must be
 * in Europe but not Greece", 244 "… must not be in EU"): 1.1 / 2.1 a Greek business, 1.2 /
 * 2.2 one of another EU member state, 1.3 / 2.3 one outside the EU. Credit notes (5.x)
 * follow the invoice they credit; retail documents have no counterpart.
 */
export type CounterpartZone = 'GR' | 'EU' | 'non-EU';
export function counterpartZoneOf(invoiceType: string): CounterpartZone | undefined {
  if (invoiceType === '1.1' || invoiceType === '2.1') return 'GR';
  if (invoiceType === '1.2' || invoiceType === '2.2') return 'EU';
  if (invoiceType === '1.3' || invoiceType === '2.3') return 'non-EU';
  return undefined;
}
export const zoneOfCountry = (country: string): CounterpartZone =>
  country === 'GR' ? 'GR' : EU_MEMBER_STATES.has(country) ? 'EU' : 'non-EU';

/**
 * The default invoice type: a retail receipt (11.1) or retail credit note (11.4) for a
 * consumer; for a named business counterpart a sales invoice by where it is (1.1 Greek,
 * 1.2 another EU member state, 1.3 a third country: `counterpartCountry`) or a credit note,
 * 5.1 when it names the MARK it corrects (`correlatedInvoices`), else 5.2 (not correlated).
 * `counterpartCountry` undefined: no counterpart.
 */
export function defaultInvoiceType(sale: boolean, counterpartCountry: string | undefined, correlated: boolean): MyDataInvoiceType {
  if (sale) {
    if (counterpartCountry === undefined) return '11.1';
    const zone = zoneOfCountry(counterpartCountry);
    return zone === 'GR' ? '1.1' : zone === 'EU' ? '1.2' : '1.3';
  }
  if (counterpartCountry === undefined) return '11.4';
  return correlated ? '5.1' : '5.2';
}

/**
 * Credit documents that name the MARK of what they credit (`correlatedInvoices`): 5.1
 * must (AADE error 204 "CorrelatedInvoices is mandatory for this invoice type"), 11.4 may;
 * 5.2 is the credit note that names none.
 */
export const CORRELATABLE_TYPES: readonly MyDataInvoiceType[] = ['5.1', '11.4'];

/**
 * specialInvoiceCategory 13, "correlation difficulty" (Ένδειξη Δυσχέρειας Συσχέτισης), valid
 * for 11.4 (and 14.30, an expense type we do not issue) since myDATA v1.0.11, for Φ2 / E3
 * prefilling [AADE "Technical specifications – Versions of myDATA", v1.0.11 item 3;
 * secondary: invoicemaker.gr and s1ecos appendices "valid only for document types 11.4 and
 * 14.30"]: a retail credit note that names no MARK says so (a lone credit note: a return
 * without its receipt, or the reversal of a document AADE has not acknowledged yet).
 */
export const SPECIAL_CATEGORY_CORRELATION_DIFFICULTY = 13;

/** The specialInvoiceCategory of a credit document: 13 on a retail credit note without its correlated MARK. */
export const specialCategoryOf = (invoiceType: string, correlatedMark: string | undefined): number | undefined =>
  invoiceType === '11.4' && correlatedMark === undefined ? SPECIAL_CATEGORY_CORRELATION_DIFFICULTY : undefined;

/**
 * What undoes a document that has no MARK (docs/decisions.md, cancellation rule): a credit
 * document for a sale, a new sale document for a credit one (same counterpart rule): the
 * sales invoice of the counterpart's country (1.1, 1.2 or 1.3: AADE errors 242-244).
 */
export function reversalType(original: string, counterpartCountry = 'GR'): MyDataInvoiceType {
  if (isRetail(original)) return original === '11.4' ? '11.1' : '11.4';
  return original.startsWith('5.') ? defaultInvoiceType(true, counterpartCountry, false) : '5.2';
}

export interface IncomeClassification {
  type: string;
  category: string;
}

/**
 * E3 income classification by invoice type: retail documents are "sales of goods and
 * services, retail, private clients" (E3_561_003), invoices to a Greek business "wholesale,
 * to professionals" (E3_561_001), intra-Community ones (1.2, 2.2) E3_561_005, to third
 * countries (1.3, 2.3) E3_561_006 (the only "sales" type each of those invoice types allows
 * besides E3_561_007 "other": INCOME_COMBINATIONS); goods are category1_1 (merchandise),
 * services category1_3. Credit documents classify like the sales they correct (goods unless
 * metadata says so).
 */
export function defaultIncomeClassification(invoiceType: string): IncomeClassification {
  const zone = counterpartZoneOf(invoiceType);
  return {
    type: isRetail(invoiceType) ? 'E3_561_003' : zone === 'EU' ? 'E3_561_005' : zone === 'non-EU' ? 'E3_561_006' : 'E3_561_001',
    category: isServices(invoiceType) ? 'category1_3' : 'category1_1',
  };
}

/** The values the schema allows (IncomeClassificationValueType / CategoryType, v1.0.12). */
export const INCOME_TYPES = [
  'E3_106', 'E3_205', 'E3_210', 'E3_305', 'E3_310', 'E3_318', 'E3_561_001', 'E3_561_002', 'E3_561_003',
  'E3_561_004', 'E3_561_005', 'E3_561_006', 'E3_561_007', 'E3_562', 'E3_563', 'E3_564', 'E3_565', 'E3_566',
  'E3_567', 'E3_568', 'E3_570', 'E3_595', 'E3_596', 'E3_597', 'E3_880_001', 'E3_880_002', 'E3_880_003',
  'E3_880_004', 'E3_881_001', 'E3_881_002', 'E3_881_003', 'E3_881_004', 'E3_598_001', 'E3_598_003',
] as const;
export const INCOME_CATEGORIES = [
  'category1_1', 'category1_2', 'category1_3', 'category1_4', 'category1_5', 'category1_6', 'category1_7',
  'category1_8', 'category1_9', 'category1_10', 'category1_95', 'category3',
] as const;

/**
 * The income classifications AADE accepts per invoice type, as category → types (AADE's
 * "Συνδυασμοί Χαρακτηρισμών Εσόδων" appendix to the myDATA technical specification, as
 * firebed/aade-mydata config/income-classifications.php transcribes it, commit 6572afb).
 * Another combination is refused after the sale (errors 307/313 "Classification type … is
 * forbidden for Classification category … combined with invoice type …", 308 "Classification
 * category … is forbidden for Invoice type …"), so metadata naming one is a 400 at creation.
 * category1_95 ("other information") only as 1.1 takes it with a type (E3_596, E3_597): we
 * always write one. 5.1 takes the combinations of the invoice it corrects,
 * which we do not know from its MARK: the 5.2 table, the union of the invoices' ones.
 */
type Combinations = Readonly<Record<string, readonly string[]>>;
const WHOLESALE = ['E3_561_001', 'E3_561_002', 'E3_561_007'];
const OTHER_INCOME = ['E3_562', 'E3_563', 'E3_564', 'E3_565', 'E3_566', 'E3_567', 'E3_568', 'E3_570'];
const withPrevious = (c: Record<string, readonly string[]>, previous: readonly string[]): Combinations => ({ ...c, category1_8: previous, category1_9: previous });
const I_1_1: Combinations = withPrevious({
  category1_1: WHOLESALE, category1_2: WHOLESALE, category1_3: [...WHOLESALE, 'E3_563'], category1_4: ['E3_880_001'],
  category1_5: ['E3_561_002', 'E3_561_007', ...OTHER_INCOME], category1_7: ['E3_881_001', 'E3_881_003', 'E3_881_004'],
  category1_95: ['E3_596', 'E3_597'],
}, [...WHOLESALE, ...OTHER_INCOME, 'E3_880_001', 'E3_881_001', 'E3_881_003', 'E3_881_004']);
const abroad = (sales: string, fixedAssets: string, thirdParties: string): Combinations => withPrevious({
  category1_1: [sales, 'E3_561_007'], category1_2: [sales, 'E3_561_007'], category1_3: [sales, 'E3_561_007'], category1_4: [fixedAssets],
  category1_5: [sales, 'E3_561_007', 'E3_562', 'E3_570'], category1_7: [thirdParties],
}, [sales, 'E3_561_007', 'E3_562', 'E3_570', fixedAssets, thirdParties]);
const servicesAbroad = (sales: string): Combinations => withPrevious({
  category1_3: [sales, 'E3_561_007', 'E3_563'], category1_5: [sales, 'E3_561_007', 'E3_562', 'E3_570'],
}, [sales, 'E3_561_007', 'E3_562', 'E3_563', 'E3_570']);
const CREDIT_SALES = ['E3_561_001', 'E3_561_002', 'E3_561_005', 'E3_561_006', 'E3_561_007'];
const I_5_2: Combinations = withPrevious({
  category1_1: CREDIT_SALES, category1_2: CREDIT_SALES, category1_3: [...CREDIT_SALES, 'E3_563'],
  category1_4: ['E3_880_001', 'E3_880_003', 'E3_880_004'], category1_5: [...CREDIT_SALES.slice(1), ...OTHER_INCOME],
  category1_7: ['E3_881_001', 'E3_881_003', 'E3_881_004'],
}, [...CREDIT_SALES, ...OTHER_INCOME, 'E3_880_001', 'E3_880_003', 'E3_880_004', 'E3_881_001', 'E3_881_003', 'E3_881_004']);
const RETAIL_SALES = ['E3_561_003', 'E3_561_004', 'E3_561_005', 'E3_561_006', 'E3_561_007'];
const I_11_1: Combinations = withPrevious({
  category1_1: RETAIL_SALES, category1_2: RETAIL_SALES, category1_3: [...RETAIL_SALES, 'E3_563'],
  category1_4: ['E3_880_002', 'E3_880_003', 'E3_880_004', 'E3_561_007'], category1_5: ['E3_561_007', 'E3_562', 'E3_563', 'E3_570'],
  category1_6: ['E3_595'], category1_7: ['E3_881_002', 'E3_881_003', 'E3_881_004'],
}, [...RETAIL_SALES, 'E3_562', 'E3_563', 'E3_595', 'E3_570', 'E3_880_002', 'E3_880_003', 'E3_880_004', 'E3_881_002', 'E3_881_003', 'E3_881_004']);
const I_11_2: Combinations = withPrevious({
  category1_3: ['E3_561_003', 'E3_561_005', 'E3_561_006', 'E3_561_007', 'E3_563'], category1_5: ['E3_561_007', 'E3_562', 'E3_563', 'E3_570'],
  category1_6: ['E3_595'],
}, ['E3_561_003', 'E3_561_005', 'E3_561_006', 'E3_561_007', 'E3_562', 'E3_563', 'E3_595', 'E3_570']);
const ANY_SALES = ['E3_561_001', 'E3_561_002', ...RETAIL_SALES];
const I_11_3: Combinations = withPrevious({
  category1_1: ANY_SALES, category1_2: ANY_SALES, category1_3: [...ANY_SALES, 'E3_563'],
  category1_4: ['E3_880_001', 'E3_880_002', 'E3_880_003', 'E3_880_004', 'E3_561_007'], category1_5: ['E3_561_002', 'E3_561_007', ...OTHER_INCOME],
  category1_6: ['E3_595'], category1_7: ['E3_881_001', 'E3_881_002', 'E3_881_003', 'E3_881_004'],
}, [...ANY_SALES, 'E3_880_001', 'E3_880_002', 'E3_880_003', 'E3_880_004', ...OTHER_INCOME, 'E3_595', 'E3_881_001', 'E3_881_002', 'E3_881_003', 'E3_881_004']);
const I_2_1: Combinations = withPrevious({
  category1_3: [...WHOLESALE, 'E3_563'], category1_5: ['E3_561_007', ...OTHER_INCOME],
}, [...WHOLESALE, ...OTHER_INCOME]);

export const INCOME_COMBINATIONS: Readonly<Record<MyDataInvoiceType, Combinations>> = {
  '1.1': I_1_1, '1.2': abroad('E3_561_005', 'E3_880_003', 'E3_881_003'), '1.3': abroad('E3_561_006', 'E3_880_004', 'E3_881_004'),
  '2.1': I_2_1, '2.2': servicesAbroad('E3_561_005'), '2.3': servicesAbroad('E3_561_006'),
  '5.1': I_5_2, '5.2': I_5_2,
  '11.1': I_11_1, '11.2': I_11_2, '11.3': I_11_3, '11.4': I_11_3,
};

/**
 * Why AADE would refuse this classification on this invoice type (308: the category; 307:
 * the type within the category), or undefined when it takes it.
 */
export function incomeCombinationError(invoiceType: string, c: IncomeClassification): string | undefined {
  const table = (INCOME_COMBINATIONS as Readonly<Record<string, Combinations>>)[invoiceType];
  if (table === undefined) return undefined;
  const types = table[c.category];
  if (types === undefined) {
    return `income classification category ${c.category} is not accepted by AADE on invoice type ${invoiceType} (myDATA error 308); it takes ${Object.keys(table).join(', ')}`;
  }
  if (!types.includes(c.type)) {
    return `income classification type ${c.type} is not accepted by AADE with ${c.category} on invoice type ${invoiceType} (myDATA error 307); it takes ${types.join(', ')}`;
  }
  return undefined;
}
