"""Holding back a library's printing never loops through a stdout wrapper that writes to sys.stdout."""

from __future__ import annotations

import contextlib
import sys
import threading

from oxi_cli.io.native import native_messages


class WritesThroughSysStdout:
    """A stdout wrapper that writes wherever sys.stdout points when it writes, as rich's FileProxy does through
    a console bound to sys.stdout (a progress bar's redirect)."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(sys.stdout, name)


def test_another_threads_print_during_a_held_call_reaches_stdout_without_recursing(capfd):
    failures: list[BaseException] = []

    def other_thread() -> None:
        try:
            print("printed by another thread", flush=True)
            assert isinstance(sys.stdout.encoding, str)  # looked up on the stream the proxy replaced
        except BaseException as e:  # a RecursionError would end this thread silently
            failures.append(e)

    with contextlib.redirect_stdout(WritesThroughSysStdout()), native_messages() as lines:
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    assert failures == []
    assert lines == []  # another thread's print is not the library's
    assert "printed by another thread" in capfd.readouterr().out


def test_the_calling_threads_print_during_a_held_call_is_kept_as_the_librarys():
    with contextlib.redirect_stdout(WritesThroughSysStdout()), native_messages() as lines:
        print("a warning the binding prints")
    assert lines == ["a warning the binding prints"]
