"""The client side of test_scripting_frameworks.py's Celery results test:
sends tasks to the worker, waits for their results through the Redis result
backend and prints what it saw as one JSON line (no ids, no times)."""
import json

import celery_app
from celery import chord, group

LIMIT = 60
out = {}
out["add"] = celery_app.add.delay(2, 3).get(timeout=LIMIT)
failing = celery_app.fails.delay("boom")
try:
    failing.get(timeout=LIMIT)
    out["fails"] = "no exception"
except ValueError as e:
    out["fails"] = ["ValueError", str(e), failing.state]
out["group"] = group(celery_app.add.s(i, 10) for i in range(6)).delay().get(timeout=LIMIT)
out["chord"] = chord(celery_app.add.s(i, i) for i in range(5))(celery_app.total.s()).get(timeout=LIMIT)
# Parts that finish out of order still reach the callback in header order
# when the backend keeps them in a ZSET scored by group index.
out["chord_order"] = chord(celery_app.add.s(i, 0) for i in range(8))(celery_app.ordered.s()).get(timeout=LIMIT)
if celery_app.app.conf.worker_enable_remote_control:
    replies = celery_app.app.control.ping(timeout=10)
    out["ping"] = [list(r.values())[0] for r in replies]
print(json.dumps(out))
