"""What the first embedding costs a fresh nav process: index a small workspace, embed it (the
model loads), search; prints the embedding seconds (model load included), the peak RSS and
whether torch was imported. Run once per runtime, each in its own process:

    for rt in onnx-int8 torch; do
        NAV_EMBED_RUNTIME=$rt NAV_NO_DAEMON=1 PYTHONPATH=$PWD python bench/model_load.py
    done
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from navigator import Navigator  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        shutil.copytree(HERE.parent / "tests" / "workspaces" / "python", root)
        with Navigator(root) as nav:
            nav.index()
            sync = nav.embed()
            resp = nav.search("compute the order total", k=3)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(
        f"{os.environ.get('NAV_EMBED_RUNTIME', 'onnx-int8')}: embedded {sync.embedded} chunks in {sync.seconds:.2f} s "
        f"(model load included); search complete={resp.complete}; peak RSS {peak} MB; "
        f"torch imported: {'torch' in sys.modules}"
    )


if __name__ == "__main__":
    main()
