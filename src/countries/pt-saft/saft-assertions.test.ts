import { describe, expect, it } from 'vitest';
import { saftAssertionViolations } from './saft-assertions.ts';
import { HAVE_XSD11, saftXsdValidate } from './test-tools.ts';
import { encodeWindows1252Xml } from './windows-1252.ts';
import { goldenPtCases, goldenSaftFile } from './golden-cases.ts';

/*
 * The 19 xs:assert of SAFTPT1.04_01.xsd, checked in code (saft-assertions.ts): each rule
 * against a line or record that keeps it and one that breaks it. Where Python xmlschema
 * (XSD 1.1) is installed, the broken invoice lines are also refused by the real schema's
 * assertions, so the code and the XSD agree.
 */

const NS = 'urn:OECD:StandardAuditFile-Tax:PT_1.04_01';
const file = (body: string) => `<?xml version="1.0" encoding="Windows-1252"?><AuditFile xmlns="${NS}">${body}</AuditFile>`;
const rules = (xml: string) => saftAssertionViolations(xml).map((v) => v.rule);

const line = (inner: string) => `<Line><LineNumber>1</LineNumber>${inner}</Line>`;
const invoice = (...lines: string[]) => file(`<SourceDocuments><SalesInvoices><Invoice><InvoiceNo>FS A/1</InvoiceNo>${lines.join('')}</Invoice></SalesInvoices></SourceDocuments>`);
const tax = (field: 'TaxPercentage' | 'TaxAmount', v: string) => `<Tax><TaxType>IVA</TaxType><TaxCountryRegion>PT</TaxCountryRegion><TaxCode>NOR</TaxCode><${field}>${v}</${field}></Tax>`;
const exemption = '<TaxExemptionReason>Isento artigo 9.º do CIVA</TaxExemptionReason><TaxExemptionCode>M07</TaxExemptionCode>';

describe('SAF-T (PT) assertions in code', () => {
  it('invoice lines: a 0 % rate needs the exemption, a taxed rate must not have one', () => {
    expect(rules(invoice(line(`<CreditAmount>10.00</CreditAmount>${tax('TaxPercentage', '23')}`)))).toEqual([]);
    expect(rules(invoice(line(`<CreditAmount>10.00</CreditAmount>${tax('TaxPercentage', '0')}${exemption}`)))).toEqual([]);
    expect(rules(invoice(line(`<CreditAmount>10.00</CreditAmount>${tax('TaxPercentage', '0.00')}`)))).toEqual(['tax-percentage-exemption']);
    expect(rules(invoice(line(`<CreditAmount>10.00</CreditAmount>${tax('TaxPercentage', '23')}${exemption}`)))).toEqual(['tax-percentage-exemption']);
    expect(rules(invoice(line(`<CreditAmount>10.00</CreditAmount>${tax('TaxAmount', '0')}`)))).toEqual(['tax-amount-exemption']);
    expect(rules(invoice(line(`<CreditAmount>10.00</CreditAmount>${tax('TaxAmount', '2.30')}`)))).toEqual([]);
  });

  it('invoice lines: exemption reason and code together', () => {
    expect(rules(invoice(line(`${tax('TaxPercentage', '0')}<TaxExemptionReason>Isento</TaxExemptionReason>`)))).toEqual(['exemption-code-and-reason']);
    expect(rules(invoice(line(`${tax('TaxPercentage', '23')}<TaxExemptionCode>M07</TaxExemptionCode>`)))).toEqual(['exemption-code-and-reason']);
  });

  it('invoice lines: a TaxBase line has UnitPrice and amounts 0', () => {
    expect(rules(invoice(line(`<UnitPrice>0.00</UnitPrice><TaxBase>5.00</TaxBase><CreditAmount>0.00</CreditAmount>${tax('TaxPercentage', '23')}`)))).toEqual([]);
    expect(rules(invoice(line(`<UnitPrice>1.00</UnitPrice><TaxBase>5.00</TaxBase><CreditAmount>0</CreditAmount>${tax('TaxPercentage', '23')}`)))).toEqual(['tax-base-unit-price']);
    expect(rules(invoice(line(`<UnitPrice>0</UnitPrice><TaxBase>5.00</TaxBase><DebitAmount>5.00</DebitAmount>${tax('TaxPercentage', '23')}`)))).toEqual(['tax-base-amounts']);
  });

  it('work documents carry the invoice line rules, stock movements two of them', () => {
    const work = (l: string) => file(`<SourceDocuments><WorkingDocuments><WorkDocument><DocumentNumber>CM A/1</DocumentNumber>${l}</WorkDocument></WorkingDocuments></SourceDocuments>`);
    const stock = (l: string) => file(`<SourceDocuments><MovementOfGoods><StockMovement><DocumentNumber>GT A/1</DocumentNumber>${l}</StockMovement></MovementOfGoods></SourceDocuments>`);
    expect(rules(work(line(`<UnitPrice>1</UnitPrice><TaxBase>1</TaxBase>${tax('TaxAmount', '0')}`)))).toEqual(['tax-amount-exemption', 'tax-base-unit-price']);
    // A stock movement line has no TaxAmount or TaxBase rule.
    expect(rules(stock(line(`<UnitPrice>1</UnitPrice><TaxBase>1</TaxBase>${tax('TaxPercentage', '0')}`)))).toEqual(['tax-percentage-exemption']);
    expect(saftAssertionViolations(stock(line(`${tax('TaxPercentage', '0')}`)))[0]!.path).toBe('MovementOfGoods/StockMovement[GT A/1]/Line[1]');
  });

  it('payments: RG, or RC with Tax on every line', () => {
    const payment = (type: string, ...lines: string[]) =>
      file(`<SourceDocuments><Payments><Payment><PaymentRefNo>RG A/1</PaymentRefNo>${lines.join('')}<PaymentType>${type}</PaymentType></Payment></Payments></SourceDocuments>`);
    expect(rules(payment('RG', line('<CreditAmount>1</CreditAmount>')))).toEqual([]);
    expect(rules(payment('RC', line(`<CreditAmount>1</CreditAmount>${tax('TaxPercentage', '23')}`)))).toEqual([]);
    expect(rules(payment('RC', line('<CreditAmount>1</CreditAmount>')))).toEqual(['payment-line-tax', 'payment-type']);
    expect(rules(payment('RC', line(`${tax('TaxPercentage', '23')}`), line('<CreditAmount>1</CreditAmount>')))).toEqual(['payment-line-tax']);
  });

  it('general ledger accounts: TaxonomyCode only for GM; GroupingCode by category', () => {
    const account = (category: string, extra: string) => file(`<MasterFiles><GeneralLedgerAccounts><Account><AccountID>11</AccountID><GroupingCategory>${category}</GroupingCategory>${extra}</Account></GeneralLedgerAccounts></MasterFiles>`);
    expect(rules(account('GR', ''))).toEqual([]);
    expect(rules(account('GM', '<GroupingCode>1</GroupingCode><TaxonomyCode>1</TaxonomyCode>'))).toEqual([]);
    expect(rules(account('GA', '<GroupingCode>1</GroupingCode>'))).toEqual([]);
    expect(rules(account('GM', '<GroupingCode>1</GroupingCode>'))).toEqual(['account-taxonomy']);
    expect(rules(account('GR', '<GroupingCode>1</GroupingCode><TaxonomyCode>1</TaxonomyCode>'))).toEqual(['account-taxonomy', 'account-grouping']);
    expect(rules(account('AA', ''))).toEqual(['account-grouping']);
  });

  it('the month file builder refuses to produce a file that breaks one', () => {
    const cases = goldenPtCases();
    expect(cases.some((c) => c.record.body.includes('<TaxExemptionCode>'))).toBe(true);
    // A stored document whose exempt line lost its exemption (as an older build might have written it).
    const broken = cases.map((c) => ({ ...c, record: { ...c.record, body: c.record.body.replace(/<TaxExemptionReason>[^<]*<\/TaxExemptionReason><TaxExemptionCode>[^<]*<\/TaxExemptionCode>/g, '') } }));
    expect(() => goldenSaftFile(broken)).toThrow(/pt-saft: the SAF-T file breaks the schema's assertions: SalesInvoices\/Invoice\[FT B2026\/1\]\/Line\[\d\]: Tax\/TaxPercentage is 0 but the line has no TaxExemptionReason \(tax-percentage-exemption\)/);
    expect(() => goldenSaftFile(cases)).not.toThrow();
    expect(() => saftAssertionViolations('<NotSaft/>')).toThrow(/not a SAF-T/);
  });
});

/** A complete, schema-valid file with one invoice line given (used against the real XSD 1.1). */
function fullFile(lineXml: string): Buffer {
  const header =
    '<Header><AuditFileVersion>1.04_01</AuditFileVersion><CompanyID>500000000</CompanyID><TaxRegistrationNumber>500000000</TaxRegistrationNumber><TaxAccountingBasis>F</TaxAccountingBasis><CompanyName>X</CompanyName><CompanyAddress><AddressDetail>X</AddressDetail><City>X</City><PostalCode>X</PostalCode><Country>PT</Country></CompanyAddress><FiscalYear>2026</FiscalYear><StartDate>2026-01-01</StartDate><EndDate>2026-01-31</EndDate><CurrencyCode>EUR</CurrencyCode><DateCreated>2026-02-01</DateCreated><TaxEntity>Global</TaxEntity><ProductCompanyTaxID>500000000</ProductCompanyTaxID><SoftwareCertificateNumber>0</SoftwareCertificateNumber><ProductID>X/Y</ProductID><ProductVersion>1</ProductVersion></Header>';
  const master =
    '<MasterFiles><Customer><CustomerID>999999990</CustomerID><AccountID>Desconhecido</AccountID><CustomerTaxID>999999990</CustomerTaxID><CompanyName>Consumidor final</CompanyName><BillingAddress><AddressDetail>Desconhecido</AddressDetail><City>Desconhecido</City><PostalCode>Desconhecido</PostalCode><Country>Desconhecido</Country></BillingAddress><SelfBillingIndicator>0</SelfBillingIndicator></Customer><Product><ProductType>P</ProductType><ProductCode>P1</ProductCode><ProductDescription>Produto</ProductDescription><ProductNumberCode>P1</ProductNumberCode></Product></MasterFiles>';
  const inv =
    '<Invoice><InvoiceNo>FT A/1</InvoiceNo><ATCUD>CSDF7T5H-1</ATCUD><DocumentStatus><InvoiceStatus>N</InvoiceStatus><InvoiceStatusDate>2026-01-15T10:00:00</InvoiceStatusDate><SourceID>api</SourceID><SourceBilling>P</SourceBilling></DocumentStatus><Hash>0</Hash><HashControl>1</HashControl><Period>1</Period><InvoiceDate>2026-01-15</InvoiceDate><InvoiceType>FT</InvoiceType><SpecialRegimes><SelfBillingIndicator>0</SelfBillingIndicator><CashVATSchemeIndicator>0</CashVATSchemeIndicator><ThirdPartiesBillingIndicator>0</ThirdPartiesBillingIndicator></SpecialRegimes><SourceID>api</SourceID><SystemEntryDate>2026-01-15T10:00:00</SystemEntryDate><CustomerID>999999990</CustomerID>' +
    `<Line><LineNumber>1</LineNumber><ProductCode>P1</ProductCode><ProductDescription>Produto</ProductDescription><Quantity>1</Quantity><UnitOfMeasure>UN</UnitOfMeasure><UnitPrice>10.00</UnitPrice><TaxPointDate>2026-01-15</TaxPointDate><Description>Produto</Description><CreditAmount>10.00</CreditAmount>${lineXml}</Line>` +
    '<DocumentTotals><TaxPayable>0.00</TaxPayable><NetTotal>10.00</NetTotal><GrossTotal>10.00</GrossTotal></DocumentTotals></Invoice>';
  return encodeWindows1252Xml(
    `<?xml version="1.0" encoding="Windows-1252"?>\n<AuditFile xmlns="${NS}">${header}${master}<SourceDocuments><SalesInvoices><NumberOfEntries>1</NumberOfEntries><TotalDebit>0.00</TotalDebit><TotalCredit>10.00</TotalCredit>${inv}</SalesInvoices></SourceDocuments></AuditFile>\n`,
  );
}

describe.skipIf(!HAVE_XSD11)('SAF-T (PT) assertions: the code agrees with the XSD 1.1 schema', () => {
  const zero = '<Tax><TaxType>IVA</TaxType><TaxCountryRegion>PT</TaxCountryRegion><TaxCode>ISE</TaxCode><TaxPercentage>0</TaxPercentage></Tax>';
  it.each([
    ['exempt line with its exemption', `${zero}<TaxExemptionReason>Isento artigo 9.º do CIVA</TaxExemptionReason><TaxExemptionCode>M07</TaxExemptionCode>`, true],
    ['exempt line without exemption', zero, false],
    ['exempt line with a reason but no code', `${zero}<TaxExemptionReason>Isento artigo 9.º do CIVA</TaxExemptionReason>`, false],
  ])('%s', (_name, lineXml, valid) => {
    const bytes = fullFile(lineXml);
    expect(saftAssertionViolations(bytes).length === 0).toBe(valid);
    const v = saftXsdValidate(bytes);
    expect(v.ok, v.output).toBe(valid);
  });
});
