"""Whether lowtide, with every provider's and every framework's extra, installs beside the agent frameworks' own extras
at their current releases (`nox -s installs`): `uv pip compile` resolves them together, and a conflict (lowtide's
gemini extra once needed google-genai 3 where pydantic-ai-slim[google] needs 2) ends this with uv's explanation.

The resolution runs offline first, from uv's cache: no network, well under a second. Only when the cache cannot
answer (a release it has never seen: offline, uv cannot tell a conflict from a missing file) does it ask the package
index, whose answer decides.

    python features/support/framework_installs.py [--uv PATH]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOWTIDE = "lowtide[providers,pydantic-ai,langchain]"
"""lowtide with every provider's SDK and both frameworks' adapters."""
FRAMEWORKS = [
    "pydantic-ai-slim[anthropic,openai,google,groq,mistral,bedrock]",
    "langchain-anthropic",
    "langchain-openai",
    "langchain-google-genai",
]
"""The frameworks' own provider extras, unpinned: their current releases, so that a release that conflicts is seen."""


def requirements(root: Path = ROOT) -> list[str]:
    """The requirements resolved together: lowtide from `root` (its pyproject.toml as it is now) and the frameworks."""
    return [f"{LOWTIDE} @ {root.as_uri()}", *FRAMEWORKS]


def resolve(uv: str, lines: list[str], *, offline: bool) -> subprocess.CompletedProcess[str]:
    """`uv pip compile` of `lines`: its exit status, the pinned versions on stdout, the conflict on stderr."""
    with tempfile.TemporaryDirectory() as folder:
        given = Path(folder) / "requirements.in"
        given.write_text("\n".join(lines) + "\n", encoding="utf-8")
        command = [uv, "pip", "compile", "--quiet", "--no-header", "--no-annotate", str(given)]
        return subprocess.run(
            [*command, "--offline"] if offline else command, capture_output=True, text=True, check=False
        )


def main(argv: list[str] | None = None) -> int:
    """0 when the requirements resolve (the versions chosen for the SDKs and frameworks printed), 1 with uv's
    explanation when they conflict, 2 when uv is not found."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--uv", default=shutil.which("uv"), help="the uv command (default: uv on PATH)")
    uv = parser.parse_args(argv).uv
    if not uv:
        print("uv is not installed: pip install uv", file=sys.stderr)
        return 2
    lines = requirements()
    outcome = resolve(uv, lines, offline=True)
    where = "from uv's cache"
    if outcome.returncode != 0:
        outcome = resolve(uv, lines, offline=False)
        where = "from the package index"
    if outcome.returncode != 0:
        print(f"lowtide does not install beside the frameworks' extras ({where}):", *lines, sep="\n  ", file=sys.stderr)
        print(outcome.stderr.strip(), file=sys.stderr)
        return 1
    watched = ("google-genai", "anthropic", "openai", "mistralai", "groq", "boto3", "pydantic-ai-slim", "langchain-")
    chosen = [line for line in outcome.stdout.splitlines() if line.startswith(watched)]
    print(f"lowtide installs beside the frameworks' extras ({where}):", *chosen, sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
