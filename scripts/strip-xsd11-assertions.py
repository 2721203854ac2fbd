#!/usr/bin/env python3
"""Strip the XSD 1.1 assertions from a schema so that libxml2 (xmllint) can load it.

SAF-T (PT) 1.04_01 (SAFTPT1.04_01.xsd) is an XSD 1.1 schema: besides XSD 1.0 structures
it carries 19 <xs:assert> elements, which XSD 1.0 processors such as libxml2 refuse. With
them removed, what remains is plain XSD 1.0 and xmllint validates a file's structure,
types and patterns against it; the assertions' rules are checked in code instead
(src/countries/pt-saft/saft-assertions.ts), and the full XSD 1.1 schema is still
validated with Python xmlschema in the tests.

Usage: strip-xsd11-assertions.py IN.xsd OUT.xsd
Prints one line per removed assertion (its line in IN.xsd and its test) on stderr.
The bytes are kept as they are (the schema is Windows-1252): only the assertions and the
`vc:minVersion` attribute (XSD 1.1 conditional inclusion, meaningless to libxml2) go, and
one more XSD 1.1 relaxation is rewritten: an <xs:all> whose children may occur more than
once (XSD 1.1 only; in SAF-T PT GeneralLedgerEntries/.../Lines: DebitLine, CreditLine)
becomes <xs:choice maxOccurs="unbounded"> over the same children, which accepts the same
documents and more (a Lines without any DebitLine): a structure check, not a proof.
Fails if the schema has XSD 1.1 features this script does not handle (xs:alternative,
xs:openContent, xs:defaultOpenContent, xs:override, xs:assertion), rather than hiding them.
"""
import re
import sys

ASSERT = re.compile(rb'<xs:assert\b(?:[^>]*?/>|.*?</xs:assert>)', re.S)
UNHANDLED = re.compile(rb'<xs:(alternative|openContent|defaultOpenContent|override|assertion)\b')
MIN_VERSION = re.compile(rb'\s+vc:minVersion="[^"]*"')


TAG = re.compile(rb'<(/?)xs:([A-Za-z]+)\b([^>]*?)(/?)>', re.S)


def all_to_choice(data: bytes) -> tuple[bytes, int]:
    """Rewrites each xs:all that has a direct xs:element child with maxOccurs > 1."""
    tags = list(TAG.finditer(data))
    edits = []  # (start, end, replacement)
    stack = []  # (name, index in tags)
    rewritten = 0
    for i, t in enumerate(tags):
        closing, name, attrs, selfclosing = t.group(1), t.group(2), t.group(3), t.group(4)
        if closing:
            opened, j = stack.pop()
            if opened != name:
                raise SystemExit(f'unbalanced xs:{name.decode()}')
            if name == b'all':
                depth = len(stack) + 1
                children = []
                # Its direct children: the tags between its opening and closing at its own level.
                level = depth
                for u in tags[j + 1:i]:
                    if u.group(1):
                        level -= 1
                        continue
                    if level == depth and u.group(2) == b'element':
                        children.append(u)
                    if not u.group(4):
                        level += 1
                multi = [c for c in children if re.search(rb'maxOccurs="(unbounded|[2-9][0-9]*|1[0-9]+)"', c.group(3))]
                if multi:
                    rewritten += 1
                    edits.append((tags[j].start(), tags[j].end(), b'<xs:choice maxOccurs="unbounded"' + tags[j].group(3) + b'>'))
                    for c in multi:
                        edits.append((c.start(), c.end(), re.sub(rb'\s+maxOccurs="[^"]*"', b'', c.group(0))))
                    edits.append((t.start(), t.end(), b'</xs:choice>'))
            continue
        if not selfclosing:
            stack.append((name, i))
    for start, end, repl in sorted(edits, reverse=True):
        data = data[:start] + repl + data[end:]
    return data, rewritten


def strip(data: bytes) -> tuple[bytes, list[tuple[int, str]]]:
    other = UNHANDLED.search(data)
    if other:
        line = data[: other.start()].count(b'\n') + 1
        raise SystemExit(f'unhandled XSD 1.1 feature xs:{other.group(1).decode()} at line {line}')
    removed = []
    for m in ASSERT.finditer(data):
        line = data[: m.start()].count(b'\n') + 1
        test = re.search(rb'test="([^"]*)"', m.group(0))
        removed.append((line, ' '.join((test.group(1) if test else b'').decode('cp1252').split())))
    out, _ = all_to_choice(MIN_VERSION.sub(b'', ASSERT.sub(b'', data)))
    return out, removed


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print('usage: strip-xsd11-assertions.py IN.xsd OUT.xsd', file=sys.stderr)
        return 2
    with open(argv[1], 'rb') as f:
        data = f.read()
    out, removed = strip(data)
    if b'<xs:assert' in out:
        raise SystemExit('an xs:assert survived stripping')
    with open(argv[2], 'wb') as f:
        f.write(out)
    for line, test in removed:
        print(f'{argv[1]}:{line}: removed xs:assert test="{test}"', file=sys.stderr)
    print(f'{len(removed)} assertion(s) removed', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
