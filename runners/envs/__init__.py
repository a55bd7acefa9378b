"""What users hand in as environments: making (vector) envs, their context, multi-agent envs,
their spaces and the env-to-module pipeline."""

from ._connectors import (
    EnvToModule as EnvToModule,
    FlattenObservations as FlattenObservations,
    ObservationPreprocessor as ObservationPreprocessor,
    SingleAgentObservationPreprocessor as SingleAgentObservationPreprocessor,
    env_to_module_pipeline as env_to_module_pipeline,
)
from ._env import (
    EnvContext as EnvContext,
    TaskSettableEnv as TaskSettableEnv,
    check_env as check_env,
    env_maker as env_maker,
    env_name as env_name,
    is_env_failure as is_env_failure,
    make_vector_env as make_vector_env,
    mark_env_failure as mark_env_failure,
    resolve_env as resolve_env,
)
from ._multi_agent_env import (
    MultiAgentCartPole as MultiAgentCartPole,
    MultiAgentEnv as MultiAgentEnv,
    make_multi_agent as make_multi_agent,
)
from ._spaces import (
    SUPPORTED_OBSERVATION_SPACES as SUPPORTED_OBSERVATION_SPACES,
    Flattener as Flattener,
    check_observation_space as check_observation_space,
)

__all__ = (
    "SUPPORTED_OBSERVATION_SPACES",
    "EnvContext",
    "EnvToModule",
    "FlattenObservations",
    "Flattener",
    "MultiAgentCartPole",
    "MultiAgentEnv",
    "ObservationPreprocessor",
    "SingleAgentObservationPreprocessor",
    "TaskSettableEnv",
    "check_env",
    "check_observation_space",
    "env_maker",
    "env_name",
    "env_to_module_pipeline",
    "is_env_failure",
    "make_multi_agent",
    "make_vector_env",
    "mark_env_failure",
    "resolve_env",
)
