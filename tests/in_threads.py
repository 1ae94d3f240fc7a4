"""Running a test's work on several Python threads at once, for tests."""
import threading


def run_threads(work, count: int) -> list:
    """work(t) for t in 0..count-1, each on its own thread, all released together
    (a barrier) and joined; the exceptions they raised (empty when none did)."""
    errors, start = [], threading.Barrier(count)

    def run(t):
        try:
            start.wait()
            work(t)
        except Exception as exc:             # reported to the caller
            errors.append(exc)

    pool = [threading.Thread(target=run, args=(t,)) for t in range(count)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return errors
