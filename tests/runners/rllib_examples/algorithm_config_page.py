"""Port of the code on RLlib's AlgorithmConfig page (doc/source/rllib/algorithm-config.rst).

The page's ``testcode`` blocks, in the page's order, as one script: a config built by
chained calls (learning rate, two learners), setting an attribute directly (which the
page calls wrong) next to the method that does it, IMPALA's own config class and an
IMPALA-only setting, two Algorithms built from one config that changes in between (each
keeps its copy), and the generic settings (env, lr, batch size per learner, total batch
size, gamma, runners and envs per runner, learners, explore, rollout length).

Changes from the original, besides its imports: its prose and comments are ours; the
hidden ``testcode`` blocks (the ``stop()`` calls) run where the page has them; the
page's one ``code-block`` (a Tuner with ``..`` for its other arguments) is not code RLlib
runs either and is left out. Every call to RLlib's API is as the page makes it.
"""

from hookbus.runners import AlgorithmConfig

config = AlgorithmConfig().training(lr=0.0005).learners(num_learners=2)

# Setting an attribute skips the config's checks; the page shows both ways.
config.env = "CartPole-v1"

config.environment(env="CartPole-v1")

from hookbus.runners import IMPALAConfig  # noqa: E402  (the page imports it here)

config = IMPALAConfig().environment("CartPole-v1").training(lr=0.0004)

# A setting of IMPALA's own.
config.training(entropy_coeff=0.01)

impala = config.build_algo()

impala.stop()

# The built Algorithm has its own copy: changing the config now affects the next build.
config.training(lr=0.00123)
another_impala = config.build_algo()

another_impala.stop()

config.environment("Humanoid-v5")

config.training(lr=0.0001)

config.training(train_batch_size_per_learner=256)

config.training(train_batch_size_per_learner=256)
config.learners(num_learners=2)
print(config.total_train_batch_size)  # 256 per learner, 2 learners: 512

config.training(gamma=0.995)

config.env_runners(num_env_runners=4)

# Sub-envs per runner (single-agent setups only, the page says).
config.env_runners(num_envs_per_env_runner=10)

config.learners(num_learners=2)

# Actions from forward_inference() instead of forward_exploration().
config.env_runners(explore=False)

config.env_runners(rollout_fragment_length=50)
