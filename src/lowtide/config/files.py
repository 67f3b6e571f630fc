"""Reading an actor file: YAML (a key named twice is refused, with both lines) or TOML, by extension, into the mapping
of settings `config` validates; a file that cannot be read, is not UTF-8, is empty or holds something other than a
mapping at its top is said plainly, never quoting a line (it may hold a secret)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from lowtide.errors import ConfigurationError

if TYPE_CHECKING:
    import tomllib

    import yaml

__all__ = ["as_mapping", "read_document"]


def read_document(path: Path) -> dict[str, Any]:
    """The settings an actor file holds, as a mapping; a `ConfigurationError` naming the file and what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"Cannot read configuration file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f"{path} is not UTF-8 text (byte {exc.start} cannot be decoded).") from None
    suffix = path.suffix.lower()
    # The parsers are imported here, for the files that need them: an actor configured in Python loads neither.
    import tomllib

    import yaml

    try:
        if suffix == ".toml":
            document: object = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            document = yaml.load(text, Loader=_unique_keys_loader())  # a SafeLoader
        else:
            raise ConfigurationError(f"{path}: unknown configuration format {suffix!r}; use .yaml, .yml or .toml")
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"{path} is not valid {suffix.lstrip('.').upper()}: {_syntax_problem(exc)}") from None
    mapping = as_mapping(document)
    if not mapping:
        raise ConfigurationError(f"{path} {_what_it_holds(document)}; {_EXPECTED}")
    return mapping


_EXPECTED = (
    "an actor file holds one actor's settings (name: ..., model: ...), or several under `actors:` with shared"
    " `defaults:`."
)


def _what_it_holds(document: object) -> str:
    if document is None or document == {}:
        return "is empty"
    if isinstance(document, list):
        return "holds a list at its top level"
    return f"holds a single value ({type(document).__name__}) at its top level"


_LOADER: list[type[yaml.SafeLoader]] = []


def _unique_keys_loader() -> type[yaml.SafeLoader]:
    """PyYAML's safe loader, refusing a mapping that names a key twice (it would keep the last one, silently)."""
    if _LOADER:
        return _LOADER[0]
    import yaml

    class UniqueKeys(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
            seen: dict[object, int] = {}
            pairs = cast("list[tuple[yaml.Node, yaml.Node]]", node.value)
            for key_node, _ in pairs:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *defaults`: what it brings may be overridden, as YAML means it to be
                key = cast("object", self.construct_object(key_node, deep=deep))  # pyright: ignore[reportUnknownMemberType]
                line = cast("int", key_node.start_mark.line)
                try:
                    first = seen.setdefault(key, line)
                except TypeError:
                    continue  # an unhashable key: the base class says so
                if first != line:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (first at line {first + 1})", key_node.start_mark
                    )
            return super().construct_mapping(node, deep=deep)

    _LOADER.append(UniqueKeys)
    return UniqueKeys


def _syntax_problem(exc: yaml.YAMLError | tomllib.TOMLDecodeError) -> str:
    """Where and what the syntax error is, without quoting the file: the offending line may hold a secret."""
    import tomllib

    if isinstance(exc, tomllib.TOMLDecodeError):
        # tomllib's message is its own wording plus "(at line L, column C)", never the line's content.
        return str(exc)
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or "syntax error"
    if mark is None:
        return str(problem)
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"


def as_mapping(value: object) -> dict[str, Any] | None:
    """`value` as a mapping with string keys (YAML allows others), or None when it is not a mapping."""
    if not isinstance(value, Mapping):
        return None
    return {str(key): item for key, item in cast("Mapping[object, Any]", value).items()}
