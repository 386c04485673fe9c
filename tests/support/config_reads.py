"""Which dotted config paths the sources read: a typed walk of their AST, for the dead-key test.

A leaf name found anywhere is no evidence (``local.max_hops`` would count as read by any ``.max_hops``), so a
read is only an attribute chain whose root has a config type: a parameter, variable, class attribute,
dataclass field or ``self`` attribute annotated with a section (``settings: LocalConfig``), a Protocol whose
members only config sections have (``HistorySettings``), or a value such a thing yields (``rt.config.drift``,
``request.settings(config)``, ``cfg.model_copy(...)``, ``getattr(cfg, "name")``). A section annotation stands for
every place that section's class (or a subclass) sits in the tree: ``LocalConfig`` for ``local`` and
``drift.local``, as a type checker sees it. Untyped values are never guessed at: a read through one is missed,
so the check errs towards reporting a key, never towards passing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

Atom = tuple[str, str]  # ("cfg", section path, "" for the root) or ("cls", project class name)
Type = frozenset[Atom]
NONE: Type = frozenset()
SAME_SECTION_METHODS = {"model_copy"}  # returns a section of the same place


@dataclass
class Tree:
    """The config model as places: section path -> model class, and the leaves under each section."""

    sections: dict[str, type[BaseModel]] = field(default_factory=dict)
    leaves: dict[str, set[str]] = field(default_factory=dict)
    children: dict[str, dict[str, str]] = field(default_factory=dict)  # section -> field -> child section

    @classmethod
    def of(cls, root: type[BaseModel]) -> Tree:
        tree = cls()
        tree._add("", root)
        return tree

    def _add(self, path: str, model: type[BaseModel]) -> None:
        self.sections[path] = model
        self.leaves[path], self.children[path] = set(), {}
        for name, f in model.model_fields.items():
            ann, sub = f.annotation, f"{path}.{name}" if path else name
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                self.children[path][name] = sub
                self._add(sub, ann)
            else:
                self.leaves[path].add(name)

    def leaf_paths(self) -> set[str]:
        return {f"{p}.{leaf}" if p else leaf for p, names in self.leaves.items() for leaf in names}

    def places_of(self, model_name: str) -> Type:
        """Every section whose class is ``model_name`` or a subclass of it."""
        return frozenset(
            ("cfg", p) for p, m in self.sections.items() if any(b.__name__ == model_name for b in m.__mro__)
        )

    def places_with(self, members: set[str]) -> Type:
        """Sections that have every one of ``members`` (a Protocol's attributes) as fields."""
        return frozenset(
            ("cfg", p) for p in self.sections if members and members <= self.leaves[p] | set(self.children[p])
        )

    def model_names(self) -> set[str]:
        return {b.__name__ for m in self.sections.values() for b in m.__mro__ if issubclass(b, BaseModel)} - {
            "BaseModel"
        }


@dataclass
class ClassInfo:
    name: str
    bases: list[str]
    attrs: dict[str, ast.expr] = field(default_factory=dict)  # annotations
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    assigned: dict[str, Type] = field(default_factory=dict)  # self.x = <typed value>
    protocol: bool = False


class Reads:
    """Walk modules (name -> source) and collect the leaf paths read through config-typed values."""

    def __init__(self, tree: Tree, sources: Mapping[str, str]) -> None:
        self.tree = tree
        self.models = tree.model_names()
        self.modules = {name: ast.parse(text, filename=name) for name, text in sources.items()}
        self.classes: dict[str, ClassInfo] = {}
        self.functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.read: set[str] = set()
        for mod in self.modules.values():
            self._collect(mod)

    # ---- pass 1: classes, their annotated attributes, methods; top-level functions
    def _collect(self, mod: ast.Module) -> None:
        for node in ast.walk(mod):
            if isinstance(node, ast.ClassDef):
                bases = [_name(b) for b in node.bases]
                info = ClassInfo(node.name, [b for b in bases if b], protocol="Protocol" in bases)
                for stmt in node.body:
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        info.attrs[stmt.target.id] = stmt.annotation
                    elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                        info.methods[stmt.name] = stmt
                self.classes.setdefault(node.name, info)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions.setdefault(node.name, []).append(node)

    # ---- types
    def annotation(self, ann: ast.expr | None) -> Type:
        if ann is None:
            return NONE
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                return self.annotation(ast.parse(ann.value, mode="eval").body)
            except SyntaxError:
                return NONE
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            return self.annotation(ann.left) | self.annotation(ann.right)
        if isinstance(ann, ast.Subscript) and _name(ann.value) in ("Optional", "Union"):
            parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            return frozenset().union(*(self.annotation(p) for p in parts))
        name = _name(ann)
        if not name:
            return NONE
        if name in self.models:
            return self.tree.places_of(name)
        info = self.classes.get(name)
        if info is not None and info.protocol:
            members = set(info.attrs) | {m for m, f in info.methods.items() if _is_property(f)}
            return self.tree.places_with(members)
        return frozenset({("cls", name)}) if info is not None else NONE

    def attribute(self, base: Type, attr: str) -> Type:
        out: set[Atom] = set()
        for kind, where in base:
            if kind == "cfg":
                child = self.tree.children.get(where, {}).get(attr)
                if child is not None:
                    out.add(("cfg", child))
            else:
                out |= self._class_attribute(where, attr, set())
        return frozenset(out)

    def _class_attribute(self, cls: str, attr: str, seen: set[str]) -> Type:
        info = self.classes.get(cls)
        if info is None or cls in seen:
            return NONE
        seen.add(cls)
        if attr in info.attrs:
            return self.annotation(info.attrs[attr])
        if attr in info.methods and _is_property(info.methods[attr]):
            return self.annotation(info.methods[attr].returns)
        if attr in info.assigned:
            return info.assigned[attr]
        for b in info.bases:
            found = self._class_attribute(b, attr, seen)
            if found:
                return found
        return NONE

    def _method(self, cls: str, name: str, seen: set[str]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        info = self.classes.get(cls)
        if info is None or cls in seen:
            return None
        seen.add(cls)
        if name in info.methods:
            return info.methods[name]
        for b in info.bases:
            found = self._method(b, name, seen)
            if found is not None:
                return found
        return None

    def typeof(self, node: ast.expr, env: Mapping[str, Type]) -> Type:
        if isinstance(node, ast.Name):
            return env.get(node.id, NONE)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.typeof(node.value, env), node.attr)
        if isinstance(node, ast.Await):
            return self.typeof(node.value, env)
        if isinstance(node, ast.IfExp):
            return self.typeof(node.body, env) | self.typeof(node.orelse, env)
        if isinstance(node, ast.BoolOp):
            return frozenset().union(*(self.typeof(v, env) for v in node.values))
        if isinstance(node, ast.NamedExpr):
            return self.typeof(node.value, env)
        if isinstance(node, ast.Call):
            return self._call(node, env)
        return NONE

    def _call(self, node: ast.Call, env: Mapping[str, Type]) -> Type:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
            key = node.args[1]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return self.attribute(self.typeof(node.args[0], env), key.value)
            return NONE
        if isinstance(func, ast.Attribute):
            base = self.typeof(func.value, env)
            out: set[Atom] = {a for a in base if a[0] == "cfg"} if func.attr in SAME_SECTION_METHODS else set()
            for kind, cls in base:
                if kind == "cls":
                    method = self._method(cls, func.attr, set())
                    if method is not None:
                        out |= self.annotation(method.returns)
            return frozenset(out)
        if isinstance(func, ast.Name):
            if func.id in self.classes:
                return frozenset({("cls", func.id)})
            defs = self.functions.get(func.id, [])
            return frozenset().union(*(self.annotation(d.returns) for d in defs)) if defs else NONE
        return NONE

    # ---- pass 2: environments per function, then reads
    def run(self, rounds: int = 3) -> set[str]:
        """The leaf paths read (rounds let ``self.x = typed`` assignments reach methods walked earlier)."""
        for _ in range(rounds):
            self.read = set()
            for mod in self.modules.values():
                self._scope(mod.body, {}, None)
        return self.read

    def _scope(self, body: list[ast.stmt], outer: Mapping[str, Type], class_body: str | None) -> None:
        """One scope; ``class_body`` names the class when ``body`` is a class body (its defs are methods)."""
        env = dict(outer)
        for _ in range(2):  # flow-insensitive: a name's type is every typed value bound to it
            for stmt in body:
                for node in _walk_scope(stmt):
                    self._bind(node, env)
        for stmt in body:
            for node in _walk_scope(stmt):
                self._record(node, env)
                if isinstance(node, ast.ClassDef):
                    self._scope(node.body, env, node.name)
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    method_of = class_body if node in body else None
                    self._scope(node.body, {**env, **self._params(node, method_of)}, None)
                elif isinstance(node, ast.Lambda):
                    self._lambda(node, env)

    def _lambda(self, node: ast.Lambda, env: Mapping[str, Type]) -> None:
        for sub in ast.walk(node.body):
            self._record(sub, env)

    def _params(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None) -> dict[str, Type]:
        args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        env = {a.arg: self.annotation(a.annotation) for a in args if a.annotation is not None}
        first = (fn.args.posonlyargs + fn.args.args)[:1]
        if cls is not None and first and first[0].annotation is None:
            env[first[0].arg] = frozenset({("cls", cls)})
        return env

    def _bind(self, node: ast.AST, env: dict[str, Type]) -> None:
        if isinstance(node, ast.AnnAssign):
            typ = self.annotation(node.annotation) or (self.typeof(node.value, env) if node.value else NONE)
            self._assign(node.target, typ, env, node.value)
        elif isinstance(node, ast.Assign):
            typ = self.typeof(node.value, env)
            for target in node.targets:
                self._assign(target, typ, env, node.value)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self._assign(node.optional_vars, self.typeof(node.context_expr, env), env, node.context_expr)

    def _assign(self, target: ast.expr, typ: Type, env: dict[str, Type], value: ast.expr | None) -> None:
        """``name = typed`` binds the name; ``obj.attr = typed`` (obj of a project class) types that attribute;
        ``a, b = x, y`` pairs them up."""
        if not typ and not isinstance(target, ast.Tuple | ast.List):
            return
        if isinstance(target, ast.Name):
            env[target.id] = env.get(target.id, NONE) | typ
        elif isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List):
            for t, v in zip(target.elts, value.elts, strict=False):
                self._assign(t, self.typeof(v, env), env, v)
        elif isinstance(target, ast.Attribute):
            for kind, cls in self.typeof(target.value, env):
                if kind == "cls" and cls in self.classes:
                    info = self.classes[cls]
                    info.assigned[target.attr] = info.assigned.get(target.attr, NONE) | typ

    def _record(self, node: ast.AST, env: Mapping[str, Type]) -> None:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            self._leaf(self.typeof(node.value, env), node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            key = node.args[1] if len(node.args) >= 2 else None
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                self._leaf(self.typeof(node.args[0], env), key.value)

    def _leaf(self, base: Type, attr: str) -> None:
        for kind, where in base:
            if kind == "cfg" and attr in self.tree.leaves.get(where, set()):
                self.read.add(f"{where}.{attr}" if where else attr)


def _walk_scope(stmt: ast.stmt) -> Iterable[ast.AST]:
    """The nodes of one statement that belong to this scope (nested defs, classes and lambdas yielded, not
    entered: they are walked as their own scopes)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                stack.extend(node.decorator_list)
                stack.extend(d for d in node.args.defaults + node.args.kw_defaults if d is not None)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # Generic[...] / Protocol[...]
        return _name(node.value)
    return ""


def _is_property(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(_name(d) in ("property", "cached_property") for d in fn.decorator_list)


def config_reads(root: type[BaseModel], sources: Mapping[str, str]) -> tuple[set[str], set[str]]:
    """(leaf paths read, leaf paths of the model): their difference is the dead keys."""
    tree = Tree.of(root)
    return Reads(tree, sources).run(), tree.leaf_paths()


def unread(root: type[BaseModel], sources: Mapping[str, str]) -> list[str]:
    read, leaves = config_reads(root, sources)
    return sorted(leaves - read)


def sources_of(paths: Iterable[Any]) -> dict[str, str]:
    return {str(p): p.read_text(encoding="utf-8") for p in paths}
