"""Run one page's Python blocks in order in one namespace (reads JSON on stdin).

A ``python`` block is executed; a ``pycon`` block is run as a doctest, so the
output the page shows is compared. Prints one JSON result per block.
"""

import doctest
import io
import json
import sys
import traceback
from contextlib import redirect_stdout


def main() -> None:
    blocks = json.load(sys.stdin)
    namespace: dict = {"__name__": "__snippet__"}
    results = []
    for block in blocks:
        try:
            if block["language"] == "pycon":
                test = doctest.DocTestParser().get_doctest(block["text"], namespace, block["where"],
                                                          block["where"], 0)
                report = io.StringIO()
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
                runner.run(test, out=report.write, clear_globs=False)
                if runner.failures:
                    raise AssertionError("shown output differs:\n" + report.getvalue()[-1500:])
            else:
                with redirect_stdout(io.StringIO()):
                    exec(compile(block["text"], block["where"], "exec"), namespace)
            results.append({"ok": True})
        except BaseException as err:  # report every kind of failure, including SystemExit
            detail = "".join(traceback.format_exception_only(type(err), err)).strip()
            results.append({"ok": False, "error": detail[-1500:]})
    print(json.dumps(results))


if __name__ == "__main__":
    main()
