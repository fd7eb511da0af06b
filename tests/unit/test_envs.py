"""envs/*.yaml hold, pinned as in requirements.txt, what each rule's entry point imports."""

from tests import env_files


def test_every_rule_with_an_entry_point_names_an_env():
    missing = sorted(rule for rule, (env, _) in env_files.rule_envs().items() if not env)
    assert not missing, f"rules without conda: {missing}"


def test_import_walk_follows_the_package_and_launched_modules():
    names = env_files.imports_of("workflow_scripts.training.launch")
    assert "torch" in {name.split(".")[0] for name in names}
    train_env = env_files.expected_envs()[env_files.rule_envs()["train"][0]]
    assert "deepspeed==" in train_env and "tensorboard==" in train_env  # reached through the worker


def test_plot_env_does_not_carry_torch():
    plot_env = env_files.expected_envs()[env_files.rule_envs()["plot"][0]]
    assert "matplotlib==" in plot_env and "torch" not in plot_env


def test_envs_are_generated_from_requirements_and_imports():
    stale = [
        env
        for env, text in env_files.expected_envs().items()
        if (env_files.ROOT / "envs" / env).read_text() != text
    ]
    assert not stale, f"envs out of date: {stale}; run `make envs`"


def test_every_requirement_is_pinned_exactly():
    loose = [line for line in env_files.requirement_pins().values() if "==" not in line]
    assert not loose, loose


def test_every_env_pin_names_a_distribution_installed_here_at_that_version():
    """The envs resolve by name: every pip pin of envs/*.yaml is a distribution of this
    environment (the one the tests run in) at the pinned version, so `--use-conda` on a cluster
    installs what was tested; conda itself gives only python and pip."""
    import importlib.metadata
    import re

    for env in sorted((env_files.ROOT / "envs").glob("*.yaml")):
        text = env.read_text()
        pins = re.findall(r"^\s+- ([A-Za-z0-9_.-]+)==(\S+)$", text, re.M)
        assert pins, env
        for name, version in pins:
            installed = importlib.metadata.version(name).split("+")[0]  # a local label: torch's +cpu build
            assert installed == version, (env.name, name, installed)
        conda = re.findall(r"^  - (\S+)", text.split("dependencies:")[1], re.M)
        assert conda == ["python", "pip", "pip:"], (env.name, conda)
