"""``mooring models …``: the local model files in the data folder (no engine needed).

``list`` shows the recommended models (size, licence, whether downloaded) and every file here;
``download KEY`` fetches one (resumable, SHA-256 checked, its licence said first); ``add PATH``
links a GGUF file you have; ``remove NAME`` deletes one. Each says how to chat with the model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from mooring.adapters.model_files import (
    PART_SUFFIX,
    Checksum,
    add_file,
    download,
    installed,
    models_dir,
    remove_file,
)
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.core.local_models import (
    CATALOGUE,
    MIRROR_VARIABLE,
    CatalogueModel,
    catalogue_model,
    download_url,
)
from mooring.settings.paths import Paths


def _say(text: str) -> None:
    print(text)  # noqa: T201  # CLI output


def _use(path: Path) -> str:
    return f"Chat with it: mooring providers add {path.stem} --kind local --model-path {path}"


def run_models(args: argparse.Namespace, paths: Paths) -> ExitCode:
    """List, download, add or remove local model files."""
    folder = models_dir(paths.data_dir)
    action = args.models_command
    if action == "list":
        here = installed(folder)
        names = {f.path.name for f in here}
        if args.json:
            _say(
                json.dumps(
                    {
                        "catalogue": [
                            {
                                "key": m.key,
                                "title": m.title,
                                "file": m.file_name,
                                "url": m.url,
                                "approx_bytes": m.approx_bytes,
                                "licence": m.licence,
                                "licence_url": m.licence_url,
                                "downloaded": m.file_name in names,
                            }
                            for m in CATALOGUE
                        ],
                        "installed": [
                            {"path": str(f.path), "size": f.size, "linked": f.linked} for f in here
                        ],
                    },
                    indent=2,
                )
            )
            return ExitCode.OK
        _say("Recommended (mooring models download KEY):")
        for m in CATALOGUE:
            mark = "  [downloaded]" if m.file_name in names else ""
            _say(f"  {m.key:<14} {m.title:<32} ~{m.approx_bytes / 1e6:,.0f} MB  {m.licence}{mark}")
        _say(f"Here ({folder}):" if here else f"No model files here yet ({folder}).")
        for f in here:
            link = f" -> {f.path.resolve()}" if f.linked else ""
            _say(f"  {f.path.name}  {f.size / 1e6:,.0f} MB{link}")
        return ExitCode.OK
    if action == "add":
        target = add_file(folder, Path(args.path))
        _say(f"Added {target.name}. {_use(target)}")
        return ExitCode.OK
    if action == "remove":
        target = remove_file(folder, args.name)
        _say(f"Removed {target.name}.")
        return ExitCode.OK
    model = catalogue_model(args.key)
    if model is None:
        raise KnownError(
            f"No recommended model called {args.key!r}.",
            hint="mooring models list shows them: " + ", ".join(m.key for m in CATALOGUE),
            code="not_found",
        )
    target = folder / model.file_name
    if target.exists():
        _say(f"{model.file_name} is downloaded already. {_use(target)}")
        return ExitCode.OK
    return _download(model, target)


def _told(checksum: Checksum) -> None:
    _say(f"Checked against SHA-256 {checksum.sha256}, from {checksum.source}.")


def _download(model: CatalogueModel, target: Path) -> ExitCode:
    """Fetch ``model`` to ``target`` with its progress on standard error; Ctrl+C stops it,
    keeping what came for the next run to resume."""
    url = download_url(model, os.environ.get(MIRROR_VARIABLE))
    _say(f"{model.title}: licence {model.licence} ({model.licence_url}).")
    _say(f"Downloading ~{model.approx_bytes / 1e6:,.0f} MB from {url}")
    import httpx2

    shown = [-1]
    terminal = sys.stderr.isatty()

    def progress(done: int, total: int | None) -> None:
        if not total:
            return
        percent = done * 100 // total
        if terminal and percent != shown[0]:
            shown[0] = percent
            sys.stderr.write(f"\r  {percent:3d}%  {done / 1e6:,.0f} of {total / 1e6:,.0f} MB")
            sys.stderr.flush()
        elif not terminal and percent // 10 != shown[0]:  # a log: a line every 10 %
            shown[0] = percent // 10
            sys.stderr.write(f"  {percent:3d}%  {done / 1e6:,.1f} of {total / 1e6:,.1f} MB\n")
            sys.stderr.flush()

    with httpx2.Client(timeout=httpx2.Timeout(30.0, read=60.0)) as client:
        try:
            download(client, url, target, sha256=model.sha256, progress=progress, checksum=_told)
        except KeyboardInterrupt:
            part = target.with_name(target.name + PART_SUFFIX)
            kept = part.stat().st_size if part.exists() else 0
            sys.stderr.write(
                f"\nStopped; run again to resume ({kept / 1e6:,.1f} MB kept in {part.name}): "
                f"mooring models download {model.key}\n"
            )
            return ExitCode.CANCELLED
        finally:
            if terminal and shown[0] >= 0:
                sys.stderr.write("\n")
    _say(f"Downloaded and verified {target.name}. {_use(target)}")
    return ExitCode.OK
