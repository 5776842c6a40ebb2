#!/usr/bin/env python3
"""Prints the interop matrix (check x server) from the rows InteropTests wrote.

Usage: table.py DIRECTORY   (.build/interop: one JSON row per server)

"pass" and "FAIL" are Courier's; "n/a" is a server that does not offer what the check needs, and
"missing" a server not installed on this machine. The reasons follow the table.
"""
import json
import os
import sys


def main():
    directory = sys.argv[1]
    if not os.path.isdir(directory):
        return
    rows = []
    for name in os.listdir(directory):
        if name.endswith(".json"):
            with open(os.path.join(directory, name)) as f:
                rows.append(json.load(f))
    if not rows:
        return
    rows.sort(key=lambda row: row.get("order", 0))
    checks = []
    for row in rows:
        for cell in row.get("checks", []):
            if cell["check"] not in checks:
                checks.append(cell["check"])
    servers = [row["server"] for row in rows]
    width = max(len(c) for c in checks + ["check"])
    column = max(8, max(len(s) for s in servers))
    print("\nInterop matrix (Tests/CourierIntegrationTests/Interop):")
    print("| " + "check".ljust(width) + " | " + " | ".join(s.ljust(column) for s in servers) + " |")
    print("|" + "-" * (width + 2) + "|" + "|".join("-" * (column + 2) for _ in servers) + "|")
    notes = []
    for check in checks:
        cells = []
        for row in rows:
            if "unavailable" in row:
                cells.append(row.get("absent", "missing"))
                continue
            found = next((c for c in row["checks"] if c["check"] == check), None)
            result = found["result"] if found else "-"
            cells.append({"pass": "pass", "fail": "FAIL", "n/a": "n/a"}.get(result, result))
            if found and found.get("why"):
                notes.append(f"{row['server']} / {check}: {result}: {found['why']}")
        print("| " + check.ljust(width) + " | " + " | ".join(c.ljust(column) for c in cells) + " |")
    for row in rows:
        if "unavailable" in row:
            notes.append(f"{row['server']}: {row.get('absent', 'missing')}: {row['unavailable']}")
    print()
    for row in rows:
        if row.get("version"):
            print(f"  {row['server']}: {row['version']}")
    for note in notes:
        print("  " + note)


if __name__ == "__main__":
    main()
