"""Jobs for test_rq.py: run by rq's work horse (rq worker -P <this dir>).
Each records nothing outside rq except the flaky job's attempt counter,
kept in the same server so the retry count is the server's, not ours."""
from rq import get_current_job


def add(x, y):
    return x + y


def always_fails(message):
    raise ValueError(message)


def flaky(succeed_on):
    """Fails until its succeed_on-th attempt, then returns the attempt number."""
    job = get_current_job()
    attempt = job.connection.incr("rqtest:attempts:%s" % job.id)
    if attempt < succeed_on:
        raise RuntimeError("attempt %d fails" % attempt)
    return attempt


def plus_parent(extra):
    """Runs after the job it depends on: reads that job's result from the
    result stream (Job.return_value -> XREVRANGE COUNT 1)."""
    parent = get_current_job().dependency
    return parent.return_value() + extra


def sleeper(seconds):
    """A job the control-channel test stops while it runs (stop-job command)."""
    import time
    time.sleep(seconds)
    return "woke"
