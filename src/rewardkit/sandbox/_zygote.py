"""What the pool starts: ``python -P -s -S -B _zygote.py``, which runs ``_worker.main``.

A script is compiled from its source every time it runs, and compiling ``_worker.py`` (a
thousand lines) left ~3 MiB of the compiler's freed memory in the zygote's heap for good, pages
that every fork then copied the page table entries of and every child's exit tore down again.
Imported as a module instead, ``_worker`` is loaded from its compiled file (``__pycache__``,
written when the sandbox process imports it, or by pip), as its sibling modules already were.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _worker

del sys.path[0]  # programs must not import the sandbox's own modules
_worker.main()
