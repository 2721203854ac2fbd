#!/usr/bin/env python3
"""A sale against the local host (docs/local-host.md), with nothing but Python 3's standard library.

    npm run local                                 # or: ./dist/fiscal-local
    python3 docs/examples/local_sale.py [http://127.0.0.1:8080]

Signs up an account (or uses FISCAL_API_KEY), creates a Spanish VERI*FACTU location, sells a
coffee, waits until the record is sent (the sandbox authority answers with a test key), runs
POST /v1/admin/process-pending as an integrator does after an outage, and prints one JSON line:
{"api_key", "location_id", "transaction_id", "status"}.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timezone

BASE = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("FISCAL_URL", "http://127.0.0.1:8080")).rstrip("/")


def call(method, path, key=None, body=None):
    """One JSON request; raises with the API's {error} message on a 4xx/5xx."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if key:
        req.add_header("Authorization", "Bearer " + key)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return json.loads(res.read() or b"null")
    except urllib.error.HTTPError as e:
        raise SystemExit(f"{method} {path}: {e.code} {e.read().decode()}")


key = os.environ.get("FISCAL_API_KEY")
if not key:
    signup = call("POST", "/v1/accounts", body={"name": "Cafetería Local SL", "billing_email": f"pos-{uuid.uuid4()}@example.com"})
    key = signup["api_key"]["key"]

location = call("POST", "/v1/locations", key, {
    "name": "Cafetería Local",
    "country": "ES",
    "tax_id": "B12345674",
    "country_config": {"system": "verifactu", "legal_name": "Cafetería Local SL", "software_nif": "B12345674"},
})

# Amounts in minor units (cents); tax_rate a percentage; the totals must add up.
sale = call("POST", "/v1/transactions", key, {
    "location_id": location["id"],
    "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
    "currency": "EUR",
    "payment_method": "cash",
    "items": [{"description": "Café con leche", "quantity": 1, "unit_price": 180, "tax_rate": 10}],
    "pretax_amount": 180,
    "tax_amount": 18,
    "total_amount": 198,
})

status = sale["status"]
for _ in range(100):
    if status not in ("pending", "pending_submission", "processing"):
        break
    time.sleep(0.1)
    status = call("GET", f"/v1/transactions/{sale['id']}", key)["status"]

# No scheduler in local mode: the integrator runs the batch processors and the queue catch-up.
call("POST", "/v1/admin/process-pending", key, {})

print(json.dumps({"api_key": key, "location_id": location["id"], "transaction_id": sale["id"], "status": status}))
