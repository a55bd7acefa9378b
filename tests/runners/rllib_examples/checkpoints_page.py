"""Port of the code on RLlib's checkpointing page (doc/source/rllib/checkpoints.rst).

The page's ``testcode`` blocks, in the page's order, as one script: a single-agent PPO
on Pendulum trained one iteration and saved with ``save_to_path()`` (no path: a new
temporary folder), the same for a two-agent Pendulum with a policy per agent; a new
Algorithm made with ``Algorithm.from_checkpoint`` that trains on; the RLModule alone
loaded from its folder inside the checkpoint and run on one observation; a fresh
Algorithm from the config loaded with ``restore_from_path`` that trains on; and a Tune
run whose ``on_algorithm_init`` callback restores the checkpoint first.

Changes from the original, besides its imports: its prose and comments are ours; the
hidden ``testcode`` blocks (the ``stop()`` calls) run where the page has them; the
page's last block (a multi-agent run with modules swapped, under a "Continue multi-agent
training with RLModule swapped out" tab) is left out: it uses names the page never
defines (``current_config``, ``temp_dir``, ``PPO``, ``LEARNER_RESULTS``, ``random``), so it
cannot run under RLlib either. Every call to RLlib's API is as the page makes it.
"""

from hookbus.runners import PPOConfig

config = PPOConfig().environment("Pendulum-v1")
ppo = config.build()

# One iteration, then a checkpoint.
print(ppo.train())
checkpoint_dir = ppo.save_to_path()
print(f"saved algo to {checkpoint_dir}")

ppo.stop()

from rllib_example_envs import MultiAgentPendulum  # noqa: E402  (the page's order)

from hookbus.runners import PPOConfig, register_env  # noqa: E402

register_env("multi-pendulum", lambda cfg: MultiAgentPendulum({"num_agents": 2}))

multi_agent_config = (
    PPOConfig()
    .environment("multi-pendulum")
    .multi_agent(
        policies={"p0", "p1"},
        # Agents 0 and 1 play policies p0 and p1.
        policy_mapping_fn=lambda aid, eps, **kw: f"p{aid}",
    )
)
ppo = multi_agent_config.build()

# One iteration, then a checkpoint.
print(ppo.train())
multi_agent_checkpoint_dir = ppo.save_to_path()
print(f"saved algo to {multi_agent_checkpoint_dir}")

ppo.stop()

from hookbus.runners import Algorithm  # noqa: E402

# A new Algorithm from the single-agent checkpoint, the same env, training on.
new_ppo = Algorithm.from_checkpoint(checkpoint_dir)
assert new_ppo.config.env == "Pendulum-v1"

new_ppo.train()

new_ppo.stop()

from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from hookbus.runners import RLModule  # noqa: E402

# The module's own folder inside the Algorithm's checkpoint.
rl_module_checkpoint_dir = (
    Path(checkpoint_dir) / "learner_group" / "learner" / "rl_module" / "default_policy"
)

# The module alone, without the rest of the Algorithm.
rl_module = RLModule.from_checkpoint(rl_module_checkpoint_dir)

# One forward pass on a Pendulum observation (3 numbers), as a batch of one.
results = rl_module.forward_inference({"obs": torch.tensor([0.5, 0.25, -0.3]).unsqueeze(0).float()})
print(results)

# A fresh Algorithm from the config, then the checkpoint's state loaded into it.
new_ppo = config.build()

new_ppo.restore_from_path(checkpoint_dir)

new_ppo.train()

new_ppo.stop()

from ray import train, tune  # noqa: E402

from hookbus.kernel import Callback as DefaultCallbacks  # noqa: E402, F401  (unused, as on the page)

# Restore the checkpoint as soon as Tune's Algorithm exists.
config.callbacks(
    on_algorithm_init=(
        lambda algorithm, _dir=checkpoint_dir, **kw: algorithm.restore_from_path(_dir)
    ),
)

# Train on from the checkpoint under Tune.
results = tune.Tuner(
    config.algo_class,
    param_space=config,
    run_config=train.RunConfig(stop={"num_env_steps_sampled_lifetime": 8000}),
).fit()
