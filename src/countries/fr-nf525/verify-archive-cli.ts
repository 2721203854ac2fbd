/**
 * `npm run verify-archive -- FILE [--key-id HEX]`: verifies a France NF525 archive offline
 * (fr-nf525/archive-verify.ts `verifyNf525Archive`) and prints `OK` with what it holds, or
 * the first break by name. Exit codes: 0 the archive verifies; 1 it does not (a break is
 * printed); 2 usage or I/O error (no file, unreadable file).
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { verifyNf525Archive } from './archive-verify.ts';

const HELP = `Usage: npm run verify-archive -- FILE [--key-id HEX]

Verifies a France NF525 archive (GET /v1/locations/{id}/archives/{archive_id}) offline,
with the public key it holds: the manifest's signature, every record, closure and JET
entry (signatures, links, sums), what the manifest says they are, and every file's SHA-256.
  --key-id HEX   also require the archive's key id (SHA-256 of the public key's DER SPKI)

Prints OK and a summary, or the first break: "<check>: <file> [index] <document>: <reason>".
Exit codes:
  0  the archive verifies
  1  it does not (the first break is printed)
  2  usage or I/O error (missing argument, unreadable file)
`;

export function main(argv: readonly string[], out: (s: string) => void = (s) => process.stdout.write(s), err: (s: string) => void = (s) => process.stderr.write(s)): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    out(HELP);
    return 0;
  }
  const args = [...argv];
  let keyId: string | undefined;
  const k = args.indexOf('--key-id');
  if (k >= 0) {
    keyId = args[k + 1];
    args.splice(k, 2);
    if (keyId === undefined) {
      err('--key-id needs a value\n');
      return 2;
    }
  }
  if (args.length !== 1) {
    err(HELP);
    return 2;
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(args[0]!);
  } catch (e) {
    err(`cannot read ${args[0]}: ${(e as Error).message}\n`);
    return 2;
  }
  const r = verifyNf525Archive(bytes, keyId !== undefined ? { expectedKeyId: keyId } : {});
  if (r.ok) {
    const m = r.manifest;
    out(`OK ${m.archive_id} (${m.register_id}, ${m.environment}): ${r.counts.records} records, ${r.counts.closures} closures, ${r.counts.jet} JET entries; closure ${m.closure.number}; key ${m.key_id}\n`);
    return 0;
  }
  out(`BROKEN ${r.message}\n`);
  return 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.slice(2));
}
