"""``python -m ragsonde.samples DIR``: write the sample docs site and its benchmark into DIR, to
follow the documentation's examples as written: ``DIR/docs/`` (24 Markdown pages about a mobile
robot) and ``DIR/bench.jsonl`` (46 questions with the pages that answer them).

Nothing is overwritten, and nothing is mixed in: a folder whose ``docs/`` holds files already
(a repository's own documentation, say) is refused before anything is written.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ragsonde.samples import robotics_benchmark, robotics_docs


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        sys.stderr.write("usage: python -m ragsonde.samples DIR\n")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    target = Path(argv[0])
    pages = sorted(robotics_docs().glob("*.md"))
    plan = [(page, target / "docs" / page.name) for page in pages]
    plan.append((robotics_benchmark(), target / "bench.jsonl"))
    docs = target / "docs"
    taken = [str(dest) for _, dest in plan if dest.exists()]
    if taken or (docs.is_dir() and any(docs.iterdir())):
        what = ", ".join(taken[:3]) if taken else f"{docs} (it holds files already)"
        sys.stderr.write(
            f"VALIDATION_ERROR: refusing to write the sample over {what}; name an empty folder\n"
        )
        return 2
    (target / "docs").mkdir(parents=True, exist_ok=True)
    for source, dest in plan:
        shutil.copyfile(source, dest)
    print(
        f"wrote {len(pages)} pages to {target / 'docs'} and their benchmark to "
        f"{target / 'bench.jsonl'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
