"""A Celery application for test_scripting_frameworks.py: the Redis broker
on the server under test (GOBLIN_CELERY_BROKER); a Redis result backend
when GOBLIN_CELERY_BACKEND is set (result.get() waits on SUBSCRIBE to the
task's celery-task-meta-<id> channel; chords count their parts in a ZSET, or
a list with GOBLIN_CELERY_CHORD_LIST=1, inside MULTI). Remote control (the
pidbox: PUBLISH to a fanout channel, replies through a list) only with
GOBLIN_CELERY_CONTROL=1; no events. Tasks record their work in the same
server so the test can see them run without a result backend."""
import os

import redis
from celery import Celery

BROKER = os.environ["GOBLIN_CELERY_BROKER"]
BACKEND = os.environ.get("GOBLIN_CELERY_BACKEND") or None
app = Celery("gbcelery", broker=BROKER, backend=BACKEND)
app.conf.update(task_ignore_result=BACKEND is None,
                worker_enable_remote_control=os.environ.get("GOBLIN_CELERY_CONTROL") == "1",
                worker_send_task_events=False, broker_connection_retry_on_startup=False,
                worker_hijack_root_logger=False, broker_transport_options={"visibility_timeout": 60},
                result_backend_transport_options={"result_chord_ordered":
                                                  os.environ.get("GOBLIN_CELERY_CHORD_LIST") != "1"})


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


@app.task(name="gbcelery.ordered")
def ordered(values):
    """A chord callback that shows the order the backend hands the parts in."""
    return list(values)


@app.task(name="gbcelery.fails")
def fails(message):
    raise ValueError(message)
