"""Publishers: EnvRunners stepping gymnasium envs, the Algorithm, and numpy learners."""

from hookbus.events._public import publish_names
from hookbus.kernel import Episode as Episode

from ._algorithm import Algorithm as Algorithm
from ._builtin import EnvRunnerMetrics as EnvRunnerMetrics
from ._config import AlgorithmConfig as AlgorithmConfig
from ._env import EnvContext as EnvContext, TaskSettableEnv as TaskSettableEnv
from ._env_runner import EnvRunner as EnvRunner
from ._errors import AlgorithmStateError as AlgorithmStateError
from ._group import EnvRunnerGroup as EnvRunnerGroup
from ._ppo import PPOLearner as PPOLearner, PPOModule as PPOModule, Trajectory as Trajectory
from ._ppo_algorithm import PPO as PPO, PPOConfig as PPOConfig
from ._process import ProcessEnvRunner as ProcessEnvRunner
from ._wire import RemoteError as RemoteError

__all__ = (
    "PPO",
    "Algorithm",
    "AlgorithmConfig",
    "AlgorithmStateError",
    "EnvContext",
    "EnvRunner",
    "EnvRunnerGroup",
    "EnvRunnerMetrics",
    "Episode",
    "PPOConfig",
    "PPOLearner",
    "PPOModule",
    "ProcessEnvRunner",
    "RemoteError",
    "TaskSettableEnv",
    "Trajectory",
)

publish_names(__name__, globals(), __all__)
del publish_names
