"""The task monitor's parts (composed by :class:`mooring.services.task_monitor.TaskMonitor`).

- :mod:`.scheduler`: which task is due when (pure: a clock and a jitter injected, no I/O);
- :mod:`.lines`: each server's due records, polled ``per_server`` at a time;
- :mod:`.observer`: one check, persisted, told, its next poll planned;
- :mod:`.streams`: the listen streams the monitor puts tasks on, and their coverage;
- :mod:`.notices`: task notifications, one at a time per task, the newest first;
- :mod:`.delivery`: the user's answers and cancels, saved, then sent until acknowledged;
- :mod:`.failures`: polls that keep failing (retry backoff, the unreadable-task issue);
- :mod:`.recall`: server definitions and stored records kept between polls;
- :mod:`.recording`: a reconciliation stored and told, a task's run span.
"""
