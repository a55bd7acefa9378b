"""Ctrl-C during a sync call (``algo.train()``) cancels the work in the event loop first."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# In a child process: the test sends SIGINT to the child's main thread, never to pytest's.
SCRIPT = textwrap.dedent(
    """
    import signal
    import threading

    import anyio

    from hookbus.kernel import Callback
    from hookbus.runners import PPOConfig

    MAIN = threading.main_thread().ident


    class Interrupt(Callback):
        def __init__(self):
            self.log = []

        async def on_sample_end(self, **kwargs):
            self.log.append("sampled")
            await anyio.sleep(0.1)  # train() is waiting for this iteration by now
            signal.pthread_kill(MAIN, signal.SIGINT)  # what Ctrl-C does
            try:
                await anyio.sleep(30)
            finally:
                self.log.append("unwound")


    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .callbacks(Interrupt)
    )
    with config.build() as algo:
        callback = algo.bus.callbacks[0]
        try:
            algo.train()
        except KeyboardInterrupt:
            print("interrupted:", *callback.log)
    """
)


def test_an_interrupted_train_has_unwound_when_the_interrupt_arrives() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # The iteration was cancelled and finished unwinding before train() raised, so nothing
    # of it still runs while the caller goes on (here: stop() on leaving the block).
    assert done.stdout.split() == ["interrupted:", "sampled", "unwound"]
