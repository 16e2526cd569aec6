"""How Mooring starts its bundled demo server, and the rule that keeps a built-in server's command
line following this installation (a moved virtual environment, a frozen bundle).

The first-use step (:mod:`mooring.services.first_run`) applies the rule; the quick ``tasks
list`` (:mod:`mooring.launch`) only checks whether it would change anything, so it lives here,
where loading it costs nothing.
"""

from __future__ import annotations

# How Mooring starts its demo server: from Python, or as an entry of a frozen bundle.
DEMO_LAUNCHES = (("-m", "mooring.demo_server"), ("demo-server",))


def launch_split(args: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``args`` as (how Mooring starts the demo server, the server's own flags), or ``None``
    when they do not start it the way Mooring does."""
    for launch in DEMO_LAUNCHES:
        if args[: len(launch)] == launch:
            return launch, args[len(launch) :]
    return None


def launch_for_this_installation(
    command: str | None, args: tuple[str, ...], ours: str, our_args: tuple[str, ...]
) -> tuple[str, ...] | None:
    """The arguments a built-in stdio server started by ``command args`` should have to start
    the way this installation does (``ours our_args``), or ``None`` when it is right already
    (or its command line is the user's own, which stays)."""
    launch, theirs = launch_split(our_args), launch_split(args)
    if launch is None or theirs is None:
        return None
    wanted = (*launch[0], *theirs[1])
    return None if (command, args) == (ours, wanted) else wanted
