"""A Celery application for test_scripting_frameworks.py: the Redis broker
on the server under test (GOBLIN_CELERY_BROKER); a Redis result backend
only when GOBLIN_CELERY_BACKEND is set (it needs pub/sub); no remote
control or events (pub/sub too). Tasks record their work in the same
server so the test can see them run without a result backend."""
import os

import redis
from celery import Celery

BROKER = os.environ["GOBLIN_CELERY_BROKER"]
BACKEND = os.environ.get("GOBLIN_CELERY_BACKEND") or None
app = Celery("gbcelery", broker=BROKER, backend=BACKEND)
app.conf.update(task_ignore_result=BACKEND is None, worker_enable_remote_control=False, worker_send_task_events=False,
                broker_connection_retry_on_startup=False, worker_hijack_root_logger=False,
                broker_transport_options={"visibility_timeout": 60})


@app.task(name="gbcelery.double")
def double(x):
    redis.Redis.from_url(BROKER).rpush("celery:results", x * 2)
    return x * 2


@app.task(name="gbcelery.add")
def add(x, y):
    return x + y


@app.task(name="gbcelery.total")
def total(values):
    return sum(values)
