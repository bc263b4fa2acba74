// What a binding declares, for the walks over acorn's tree in the hub's acorn context
// (the step debugger's instrumentation and the strict-mode check, evaluated after
// this file and dist/acorn.js): each takes __webjob_ast. Never part of a job's sandbox.
(function () {
  'use strict';
  const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression',
    'ArrowFunctionExpression']);
  const SKIP_KEYS = new Set(['type', 'start', 'end', 'loc', 'range']);

  // A node's child nodes, in source order.
  function children(node) {
    const out = [];
    for (const key of Object.keys(node)) {
      if (SKIP_KEYS.has(key)) continue;
      const value = node[key];
      if (Array.isArray(value)) {
        for (const item of value) if (item && typeof item.type === 'string') out.push(item);
      } else if (value && typeof value.type === 'string') {
        out.push(value);
      }
    }
    return out;
  }

  // The names a binding pattern declares (`a`, `{b, c: [d]}`, `...e`, `f = 1`).
  function patternNames(pattern, out) {
    if (!pattern) return out;
    switch (pattern.type) {
      case 'Identifier': out.add(pattern.name); break;
      case 'ObjectPattern':
        for (const p of pattern.properties) patternNames(p.type === 'RestElement' ? p : p.value, out);
        break;
      case 'ArrayPattern': for (const e of pattern.elements) patternNames(e, out); break;
      case 'RestElement': patternNames(pattern.argument, out); break;
      case 'AssignmentPattern': patternNames(pattern.left, out); break;
      default: break;
    }
    return out;
  }

  // `var`s anywhere under `node`, but not in the functions (or static blocks) nested
  // in it: they belong to their own function's scope.
  function hoistedVars(node, out) {
    if (node.type === 'VariableDeclaration' && node.kind === 'var') {
      for (const d of node.declarations) patternNames(d.id, out);
    }
    for (const child of children(node)) {
      if (!FUNCTIONS.has(child.type) && child.type !== 'StaticBlock') hoistedVars(child, out);
    }
    return out;
  }

  // What a statement list declares for its block: let/const/class and the functions
  // declared in it (strict mode's rule: a block's function is the block's).
  function lexicalNames(statements, out) {
    for (const s of statements) {
      if (s.type === 'VariableDeclaration' && s.kind !== 'var') {
        for (const d of s.declarations) patternNames(d.id, out);
      } else if ((s.type === 'ClassDeclaration' || s.type === 'FunctionDeclaration') && s.id) {
        out.add(s.id.name);
      }
    }
    return out;
  }

  Object.defineProperty(globalThis, '__webjob_ast', { value: Object.freeze({
    FUNCTIONS, children, patternNames, hoistedVars, lexicalNames }) });
})();
