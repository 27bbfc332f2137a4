#!/usr/bin/env python3
"""Pastes the key tables of `dem laws` between the marker comments of
docs/scene-format.md (the test LawConformanceRows.SceneFormatDocsHoldTheRegistrysKeyTables
checks that they match the registries).

    python3 tools/update_law_tables.py [build/apps/dem]
"""
import pathlib
import subprocess
import sys

dem = sys.argv[1] if len(sys.argv) > 1 else "build/apps/dem"
out = subprocess.run([dem, "laws"], check=True, capture_output=True, text=True).stdout
head, sep, contact = out.partition("\n### Contact laws\n")
if not sep or not head.startswith("### Bond laws\n\n"):
    sys.exit("update_law_tables: unexpected output of `dem laws`")
bond = head[len("### Bond laws\n\n"):]
doc_path = pathlib.Path(__file__).resolve().parent.parent / "docs" / "scene-format.md"
doc = doc_path.read_text()
for marker, table in (("bond-law-table", bond), ("contact-law-tables", contact)):
    begin, end = f"<!-- {marker}: begin -->", f"<!-- {marker}: end -->"
    a, b = doc.find(begin), doc.find(end)
    if a < 0 or b < a:
        sys.exit(f"update_law_tables: the {marker} markers are missing")
    doc = doc[: a + len(begin)] + "\n\n" + table + doc[b:]
doc_path.write_text(doc)
print(f"updated {doc_path}")
