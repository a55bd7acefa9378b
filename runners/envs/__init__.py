"""Environments: what users hand in, made into the (vector) envs that the runners step.

Making and checking envs, their context, multi-agent envs, their spaces and the env-to-module
pipeline; ``env_names_code`` and ``without_env_imports`` serve the stored config and
``hookbus tune``.
"""

from ._connectors import (
    EnvToModule as EnvToModule,
    FlattenObservations as FlattenObservations,
    ObservationPreprocessor as ObservationPreprocessor,
    SingleAgentObservationPreprocessor as SingleAgentObservationPreprocessor,
    connector_pieces as connector_pieces,
    env_to_module_pipeline as env_to_module_pipeline,
)
from ._env import (
    EnvContext as EnvContext,
    TaskSettableEnv as TaskSettableEnv,
    check_env as check_env,
    env_maker as env_maker,
    env_name as env_name,
    env_names_code as env_names_code,
    is_env_failure as is_env_failure,
    mark_env_failure as mark_env_failure,
    remake_failed as remake_failed,
    resolve_env as resolve_env,
    without_env_imports as without_env_imports,
)
from ._multi_agent_connectors import (
    MultiAgentEnvToModule as MultiAgentEnvToModule,
    multi_agent_pipeline as multi_agent_pipeline,
)
from ._multi_agent_env import (
    MultiAgentCartPole as MultiAgentCartPole,
    MultiAgentEnv as MultiAgentEnv,
    make_multi_agent as make_multi_agent,
)
from ._registry import (
    RegisteredEnv as RegisteredEnv,
    lookup_registered_env as lookup_registered_env,
    register_env as register_env,
    registered_env_names as registered_env_names,
    resolve_registered_env as resolve_registered_env,
)
from ._spaces import (
    SUPPORTED_OBSERVATION_SPACES as SUPPORTED_OBSERVATION_SPACES,
    Flattener as Flattener,
    check_observation_space as check_observation_space,
)
from ._vectorize import (
    AT_NEXT_STEP as AT_NEXT_STEP,
    VECTORIZE_MODES as VECTORIZE_MODES,
    WHEN_DONE as WHEN_DONE,
    foreach_sub_env as foreach_sub_env,
    make_vector_env as make_vector_env,
    vectorize_mode as vectorize_mode,
)

__all__ = (
    "AT_NEXT_STEP",
    "SUPPORTED_OBSERVATION_SPACES",
    "VECTORIZE_MODES",
    "WHEN_DONE",
    "EnvContext",
    "EnvToModule",
    "FlattenObservations",
    "Flattener",
    "MultiAgentCartPole",
    "MultiAgentEnv",
    "MultiAgentEnvToModule",
    "ObservationPreprocessor",
    "RegisteredEnv",
    "SingleAgentObservationPreprocessor",
    "TaskSettableEnv",
    "check_env",
    "check_observation_space",
    "connector_pieces",
    "env_maker",
    "env_name",
    "env_names_code",
    "env_to_module_pipeline",
    "foreach_sub_env",
    "is_env_failure",
    "lookup_registered_env",
    "make_multi_agent",
    "make_vector_env",
    "mark_env_failure",
    "multi_agent_pipeline",
    "register_env",
    "registered_env_names",
    "remake_failed",
    "resolve_env",
    "resolve_registered_env",
    "vectorize_mode",
    "without_env_imports",
)
