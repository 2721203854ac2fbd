/**
 * myDATA code lists we map the canonical transaction onto: VAT category, VAT exemption
 * cause, payment method, invoice type and income classification (E3). Codes are the
 * ones of SimpleTypes-v1.0.12.xsd / InvoicesDoc-v1.0.12.xsd (schemas/gr/mydata/); their
 * meanings are AADE's code tables as firebed/aade-mydata documents them
 * (docs/appendix/vat-categories.md, vat-exemption-categories.md, payment-methods.md,
 * income-classifications.md). docs/decisions.md "Greece: the InvoicesDoc" gives the
 * choices where the canonical request says less than myDATA needs.
 */

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

/** Invoice types a sale may take, and those of a refund or void (credit documents). */
export const SALE_TYPES = ['11.1', '11.2', '11.3', '1.1', '2.1'] as const;
export const CREDIT_TYPES = ['11.4', '5.1', '5.2'] as const;
export type SaleType = (typeof SALE_TYPES)[number];
export type CreditType = (typeof CREDIT_TYPES)[number];
export type MyDataInvoiceType = SaleType | CreditType;

/** Retail documents (category 11): no counterpart ("μη αντικριζόμενα"). */
export const isRetail = (t: string): boolean => t.startsWith('11.');
/** Documents addressed to a business counterpart, which must then be named. */
export const needsCounterpart = (t: string): boolean => !isRetail(t);
/** A services document: its income is category1_3. */
const isServices = (t: string): boolean => t === '11.2' || t === '2.1';

/**
 * The default invoice type: a retail receipt (11.1) or retail credit note (11.4) for a
 * consumer; for a named business counterpart a sales invoice (1.1) or a credit note, 5.1
 * when it names the MARK it corrects (`correlatedInvoices`), else 5.2 (not correlated).
 */
export function defaultInvoiceType(sale: boolean, counterpart: boolean, correlated: boolean): MyDataInvoiceType {
  if (sale) return counterpart ? '1.1' : '11.1';
  if (!counterpart) return '11.4';
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
 * document for a sale, a new sale document for a credit one (same counterpart rule).
 */
export function reversalType(original: string): MyDataInvoiceType {
  if (isRetail(original)) return original === '11.4' ? '11.1' : '11.4';
  return original.startsWith('5.') ? '1.1' : '5.2';
}

export interface IncomeClassification {
  type: string;
  category: string;
}

/**
 * E3 income classification by invoice type: retail documents are "sales of goods and
 * services, retail, private clients" (E3_561_003), the others "wholesale, to
 * professionals" (E3_561_001); goods are category1_1 (merchandise), services category1_3.
 * Credit documents classify like the sales they correct (goods unless metadata says so).
 */
export function defaultIncomeClassification(invoiceType: string): IncomeClassification {
  return {
    type: isRetail(invoiceType) ? 'E3_561_003' : 'E3_561_001',
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
