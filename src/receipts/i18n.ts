/**
 * The receipt's own words (not a country's legal text: that comes from the plug-ins'
 * `receipt` facts and render hints), in every receipt language.
 */
import type { PaymentMethod, ReceiptLanguage } from '../countries/types.ts';

export interface ReceiptWords {
  taxId: string;
  date: string;
  subtotal: string;
  tax: string;
  total: string;
  payment: string;
  methods: Readonly<Record<PaymentMethod, string>>;
  /** Printed on documents made with a test key: they were sent to no authority (or its sandbox). */
  test: string;
  /** Heads the receipt of a cancellation transaction (the annulment of the original document). */
  cancellation: string;
  /**
   * On any print of a document that has since been cancelled: a copy drawn after the
   * annulment says so (Portugal: the AT's FAQs ask a 2.ª via of an annulled document to say
   * "anulado"; elsewhere it is the truthful thing to print).
   */
  cancelled: string;
  /** A rounding the document declares between its VAT summary and its total (`ReceiptTaxSummary.rounding`). */
  rounding: string;
  /** The number format: decimal separator. */
  decimalSeparator: string;
}

export const WORDS: Readonly<Record<ReceiptLanguage, ReceiptWords>> = {
  en: {
    taxId: 'Tax ID', date: 'Date', subtotal: 'Subtotal', tax: 'VAT', total: 'TOTAL', payment: 'Payment',
    methods: { cash: 'cash', card: 'card', transfer: 'bank transfer', other: 'other' },
    test: 'TEST - NOT A FISCAL DOCUMENT', cancellation: 'CANCELLATION', cancelled: 'CANCELLED', rounding: 'Rounding', decimalSeparator: '.',
  },
  es: {
    taxId: 'NIF', date: 'Fecha', subtotal: 'Base imponible', tax: 'IVA', total: 'TOTAL', payment: 'Pago',
    methods: { cash: 'efectivo', card: 'tarjeta', transfer: 'transferencia', other: 'otro' },
    test: 'PRUEBA - SIN VALOR FISCAL', cancellation: 'ANULACIÓN', cancelled: 'ANULADA', rounding: 'Redondeo', decimalSeparator: ',',
  },
  it: {
    taxId: 'P. IVA', date: 'Data', subtotal: 'Imponibile', tax: 'IVA', total: 'TOTALE', payment: 'Pagamento',
    methods: { cash: 'contanti', card: 'carta', transfer: 'bonifico', other: 'altro' },
    test: 'PROVA - SENZA VALORE FISCALE', cancellation: 'ANNULLAMENTO', cancelled: 'ANNULLATO', rounding: 'Arrotondamento', decimalSeparator: ',',
  },
  fr: {
    taxId: 'N° TVA', date: 'Date', subtotal: 'Total HT', tax: 'TVA', total: 'TOTAL TTC', payment: 'Paiement',
    methods: { cash: 'espèces', card: 'carte', transfer: 'virement', other: 'autre' },
    test: 'TEST - SANS VALEUR FISCALE', cancellation: 'ANNULATION', cancelled: 'ANNULÉ', rounding: 'Arrondi', decimalSeparator: ',',
  },
  pt: {
    taxId: 'NIF', date: 'Data', subtotal: 'Total sem IVA', tax: 'IVA', total: 'TOTAL', payment: 'Pagamento',
    methods: { cash: 'numerário', card: 'cartão', transfer: 'transferência', other: 'outro' },
    test: 'TESTE - SEM VALOR FISCAL', cancellation: 'ANULAÇÃO', cancelled: 'ANULADO', rounding: 'Arredondamento', decimalSeparator: ',',
  },
  el: {
    taxId: 'ΑΦΜ', date: 'Ημερομηνία', subtotal: 'Καθαρή αξία', tax: 'ΦΠΑ', total: 'ΣΥΝΟΛΟ', payment: 'Πληρωμή',
    methods: { cash: 'μετρητά', card: 'κάρτα', transfer: 'τραπεζική μεταφορά', other: 'άλλο' },
    test: 'ΔΟΚΙΜΗ - ΧΩΡΙΣ ΦΟΡΟΛΟΓΙΚΗ ΑΞΙΑ', cancellation: 'ΑΚΥΡΩΣΗ', cancelled: 'ΑΚΥΡΩΘΗΚΕ', rounding: 'Στρογγυλοποίηση', decimalSeparator: ',',
  },
};
