#!/usr/bin/env python3
"""Runs the fiscalization engine as a child process over stdio (docs/engine.md).

One JSON envelope per line in, one answer per line out, in order. Python 3 standard
library only. Usage:

    ENGINE_API_KEY=svc_test_... ENGINE_SERVICE_URL=https://api.example.com \
    ENGINE_DATA_DIR=./engine-data python3 docs/examples/engine_stdio.py

ENGINE_CMD overrides the command that starts the engine (default: npm run --silent engine).
"""
import json
import os
import shlex
import subprocess
import sys


class Engine:
    def __init__(self, cmd):
        # stderr is the engine's log: pass it through; stdout carries only answers.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def call(self, method, params=None):
        self.proc.stdin.write(json.dumps({"version": 1, "method": method, "params": params or {}}) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        if "error" in answer:
            raise RuntimeError("%s: %s" % (answer["error"]["code"], answer["error"]["message"]))
        return answer["result"]

    def close(self):
        self.call("shutdown")
        self.proc.stdin.close()  # EOF: the engine exits 0
        return self.proc.wait(timeout=30)


def main():
    engine = Engine(shlex.split(os.environ.get("ENGINE_CMD", "npm run --silent engine")))
    init = engine.call("init", {
        "api_key": os.environ["ENGINE_API_KEY"],
        "environment": "sandbox",
        "country": "PT",
        "service_url": os.environ["ENGINE_SERVICE_URL"],
        "data_dir": os.environ.get("ENGINE_DATA_DIR", "./engine-data"),
    })
    print("initialised for account", init["account_id"], "offline" if init["offline"] else "online")
    location = engine.call("create_location", {
        "name": "Café Lisboa", "country": "PT", "tax_id": "123456789",
        "country_config": {"software_certificate_number": "1234",
                           "series": {"FT": {"prefix": "A", "atcud_code": "AAJFJMVNTN"},
                                      "FS": {"prefix": "B", "atcud_code": "BBJFJMVNTN"}}},
    })
    sale = engine.call("process_transaction", {
        "location_id": location["id"], "timestamp": "2026-03-02T09:30:00Z", "currency": "EUR",
        "payment_method": "cash",
        "items": [{"description": "Café", "quantity": 2, "unit_price": 100, "tax_rate": 23,
                   "tax_amount": 46, "total_amount": 246}],
        "pretax_amount": 200, "tax_amount": 46, "total_amount": 246,
    })
    print("sale", sale["id"], sale["status"], sale["fiscal_id"])
    print("queue", json.dumps(engine.call("queue_status")))
    sys.exit(engine.close())


if __name__ == "__main__":
    main()
