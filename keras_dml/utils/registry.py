"""`Registry`: the one table of named built-ins; declaring a built-in registers it."""

import importlib.metadata

from keras_dml.utils.suggestions import did_you_mean


def normal_name(name):
    """`name` as registries compare it: stripped, lower case, `-` read as `_`."""
    return str(name).strip().lower().replace("-", "_")


class Registry:
    """Names to objects of one kind, each with a one-line description.

    Args:
        kind: str. What the entries are, for messages (`"loss"`, `"method"`).
        entry_point_group: str or `None`. `importlib.metadata` entry-point group whose modules
            register more entries, loaded on first look-up. Defaults to `None`.
        hint: str. Appended to the unknown-name message. Defaults to `""`.
        plural: str or `None`. The kind in the plural. Defaults to `kind + "s"`.

    Examples:
    >>> colors = Registry("color")
    >>> @colors.register("dark-red", description="a red")
    ... class DarkRed: ...
    >>> colors.get("Dark_Red") is DarkRed, colors.names()
    (True, ['dark_red'])
    """

    def __init__(self, kind, entry_point_group=None, hint="", plural=None):
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self.entry_point_group = entry_point_group
        self.hint = hint
        self._entries = {}
        self._descriptions = {}
        self._entry_points_loaded = entry_point_group is None

    def register(self, name, obj=None, *, description=None, overwrite=False):
        """Registers `obj` under `name`; without `obj`, a decorator that registers its target.

        Args:
            name: str. The name configurations and the CLI use.
            obj: the object, or `None` for the decorator form.
            description: str or `None`. One line; `None` takes the docstring's first line.
            overwrite: bool. Replace another object registered under the name.

        Raises:
            ValueError: the name is taken by another object and `overwrite` is false.
        """

        def add(target):
            key = normal_name(name)
            if key in self._entries and self._entries[key] != target and not overwrite:
                raise ValueError(
                    f"A {self.kind} named {key!r} is registered already; choose another name "
                    "or pass overwrite=True."
                )
            self._entries[key] = target
            self._descriptions[key] = description if description is not None else _summary(target)
            return target

        return add if obj is None else add(obj)

    def unregister(self, name):
        """Removes the entry `name` (e.g. a test's throwaway one)."""
        key = self.key(name)
        del self._entries[key], self._descriptions[key]

    def key(self, name):
        """The registered key of `name`; a `ValueError` naming the known ones if there is none."""
        self._load_entry_points()
        key = normal_name(name)
        if key not in self._entries:
            hint = did_you_mean(name, self._entries)
            raise ValueError(
                f"Unknown {self.kind} {name!r}.{hint} Known {self.plural}: "
                f"{sorted(self._entries)}.{self.hint}"
            )
        return key

    def get(self, name):
        """The object registered under `name`."""
        return self._entries[self.key(name)]

    def names(self):
        """The registered names, sorted."""
        self._load_entry_points()
        return sorted(self._entries)

    def describe(self):
        """`{name: one-line description}`, sorted by name."""
        return {name: self._descriptions[name] for name in self.names()}

    def __getitem__(self, name):
        return self.get(name)

    def __iter__(self):
        return iter(self.names())

    def __len__(self):
        return len(self.names())

    def __contains__(self, name):
        self._load_entry_points()
        return normal_name(name) in self._entries

    def items(self):
        """`(name, object)` pairs, sorted by name."""
        return [(name, self._entries[name]) for name in self.names()]

    def _load_entry_points(self):
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for entry_point in importlib.metadata.entry_points(group=self.entry_point_group):
            entry_point.load()


def _summary(obj):
    lines = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return lines[0] if lines else ""
