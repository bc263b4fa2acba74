// The strict-mode check of a job body, run in the hub's acorn context after
// dist/acorn.js. Under the warm engine a job runs in strict mode; this walk finds,
// without running anything, what a sloppy-mode job does that strict mode refuses:
//   - an assignment to a name declared nowhere in scope (`x = 1`, `x += 1`, `++x`,
//     `for (k in o)`, `[a, b] = ...`), the job globals counting as declared; an
//     assignment to a built-in global (`Math = 1`) is reported as such;
//   - a `with` statement;
//   - a legacy octal literal (`010`, `08`) or an octal escape in a string ('\01');
//   - `delete` of a plain name, an assignment to `arguments`.
// __webjob_strict_check(source) returns, as JSON, {ok: true, findings, more} or
// {ok: false} when acorn cannot parse the body (the syntax check reports that).
// Each finding is {line, column, kind, message}: line counts '\n' only and column
// counts code points, both 1-based, as the hub's header warnings do.
(function () {
  'use strict';

  // What the sandbox defines for every run: assigning to these is the job's business.
  const JOB_GLOBALS = ['params', 'request', 'userID', 'isAuthenticated', 'limits', 'console',
    'response', 'sign', 'verify', 'breakpoint', 'require', 'db', 'http', 'crypto', 'secrets',
    'setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'queueMicrotask', 'Promise'];
  // The language's globals and the web basics the sandbox shares between runs.
  const BUILT_INS = ['globalThis', 'Infinity', 'NaN', 'undefined', 'eval', 'isFinite', 'isNaN',
    'parseFloat', 'parseInt', 'decodeURI', 'decodeURIComponent', 'encodeURI',
    'encodeURIComponent', 'escape', 'unescape', 'AggregateError', 'Array', 'ArrayBuffer',
    'AsyncDisposableStack', 'Atomics', 'BigInt', 'BigInt64Array', 'BigUint64Array', 'Boolean',
    'DataView', 'Date', 'DisposableStack', 'Error', 'EvalError', 'FinalizationRegistry',
    'Float16Array', 'Float32Array', 'Float64Array', 'Function', 'Int8Array', 'Int16Array',
    'Int32Array', 'Intl', 'Iterator', 'JSON', 'Map', 'Math', 'Number', 'Object', 'Proxy',
    'RangeError', 'ReferenceError', 'Reflect', 'RegExp', 'Set', 'SharedArrayBuffer', 'String',
    'SuppressedError', 'Symbol', 'SyntaxError', 'TypeError', 'Uint8Array', 'Uint8ClampedArray',
    'Uint16Array', 'Uint32Array', 'URIError', 'WeakMap', 'WeakRef', 'WeakSet', 'WebAssembly',
    'harden', 'Buffer', 'URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'atob', 'btoa',
    'structuredClone', 'AbortController', 'AbortSignal', 'Event', 'EventTarget',
    'DOMException'];
  const DECLARED = new Set(JOB_GLOBALS);
  const BUILT_IN = new Set(BUILT_INS);
  // Enough to show the pattern; a job with more says how many more there are.
  const MAX_FINDINGS = 50;
  const FRESH = ' \u2014 jobs run in strict mode; add `Isolation: fresh` to the header to ' +
    'keep the old behaviour';
  const OPTIONS = { ecmaVersion: 'latest', sourceType: 'script',
    allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true };
  const { children, patternNames, hoistedVars, lexicalNames } = globalThis.__webjob_ast;

  // ---- declarations (what a binding declares: ast_names.js) -----------------------

  // A scope: the names declared in it and its parent. `isWith`: the body of a `with`,
  // where any name may be a property of the object.
  function scopeOf(parent, names, isWith) {
    return { parent, names, isWith: Boolean(isWith) };
  }

  function functionScope(parent, body, params, hasArguments) {
    const names = new Set(hasArguments ? ['arguments'] : []);
    for (const p of params) patternNames(p, names);
    if (Array.isArray(body.body)) {  // a block, the job's own body or a static block
      hoistedVars(body, names);
      lexicalNames(body.body, names);
    }
    return scopeOf(parent, names);
  }

  // ---- places and messages --------------------------------------------------------

  function Checker(source) {
    this.source = source;
    this.found = [];
    this.more = 0;
    this.newlines = [];
    for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) {
      this.newlines.push(i);
    }
  }
  const C = Checker.prototype;

  // Line and code-point column of a UTF-16 offset, both 1-based.
  C.place = function (offset) {
    let low = 0;
    let high = this.newlines.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.newlines[mid] < offset) low = mid + 1; else high = mid;
    }
    const lineStart = low === 0 ? 0 : this.newlines[low - 1] + 1;
    return { line: low + 1, column: [...this.source.slice(lineStart, offset)].length + 1 };
  };

  // `why` ends the message: what strict mode has to do with it (the default).
  C.report = function (offset, kind, message, why) {
    if (this.found.length >= MAX_FINDINGS) { this.more += 1; return; }
    this.found.push({ ...this.place(offset), kind, message: message + (why || FRESH) });
  };

  // A short piece of the job's text for a message, on one line.
  C.excerpt = function (node) {
    const text = this.source.slice(node.start, node.end).replace(/\s+/g, ' ');
    return text.length > 30 ? text.slice(0, 29) + '\u2026' : text;
  };

  // ---- the walk -------------------------------------------------------------------

  function resolves(name, scope) {
    for (let s = scope; s; s = s.parent) {
      if (s.names.has(name)) return 'local';
      // Inside `with` a name may be a property of its object: `with` is reported.
      if (s.isWith) return 'unknown';
    }
    if (DECLARED.has(name)) return 'local';
    return BUILT_IN.has(name) ? 'built-in' : 'undeclared';
  }

  // `how.shown` is how the assignment reads in the message (`x = …`, `++x`);
  // `how.declared` how it would read declared (`let x`, the default); `how.reads` that
  // it reads the name first (`x += 1`, `x++`), which throws in sloppy mode too.
  C.assigned = function (id, scope, how) {
    const found = resolves(id.name, scope);
    const name = id.name;
    const shown = how.shown;
    if (found === 'undeclared' && how.reads) {
      this.report(id.start, 'undeclared', '`' + shown + '` reads the undeclared name ' +
        name + ' before assigning it: declare it (let ' + name + ' = 0)',
        ' \u2014 it throws a ReferenceError in any mode');
    } else if (found === 'undeclared') {
      this.report(id.start, 'undeclared', '`' + shown + '` assigns to the undeclared name ' +
        name + ': declare it (' + (how.declared || 'let ' + name) + ')');
    } else if (name === 'arguments' && found === 'local') {
      this.report(id.start, 'arguments', '`' + shown + '` assigns to arguments, which ' +
        'strict mode refuses: use a variable of your own');
    } else if (found === 'built-in') {
      this.report(id.start, 'built-in', '`' + shown + '` assigns to the built-in global ' +
        name + ': declare a name of your own (let my' + name.charAt(0).toUpperCase() +
        name.slice(1) + ')');
    }
  };

  // An assignment's target: a name, a member, or a destructuring pattern whose
  // names are all assigned to (defaults and computed keys are ordinary code).
  C.target = function (node, scope, how) {
    if (!node) return;
    switch (node.type) {
      case 'Identifier': this.assigned(node, scope, how); break;
      case 'ObjectPattern':
        for (const p of node.properties) {
          const value = p.type === 'RestElement' ? p.argument : p.value;
          if (p.computed) this.visit(p.key, scope);
          this.target(value, scope, how);
        }
        break;
      case 'ArrayPattern':
        for (const e of node.elements) this.target(e, scope, how);
        break;
      case 'RestElement': this.target(node.argument, scope, how); break;
      case 'AssignmentPattern':
        this.target(node.left, scope, how);
        this.visit(node.right, scope);
        break;
      default: this.visit(node, scope); break;
    }
  };

  C.visit = function (node, scope) {
    if (!node) return;
    const handler = HANDLERS[node.type];
    if (handler) { handler.call(this, node, scope); return; }
    this.all(children(node), scope);
  };

  C.all = function (nodes, scope) {
    for (const child of nodes) this.visit(child, scope);
  };

  C.fn = function (node, scope) {
    let outer = scope;
    if (node.type === 'FunctionExpression' && node.id) {
      outer = scopeOf(scope, new Set([node.id.name]));
    }
    const inner = functionScope(outer, node.body, node.params,
      node.type !== 'ArrowFunctionExpression');
    this.all(node.params, inner);
    if (node.body.type === 'BlockStatement') this.all(node.body.body, inner);
    else this.visit(node.body, inner);
  };

  C.block = function (statements, scope) {
    this.all(statements, scopeOf(scope, lexicalNames(statements, new Set())));
  };

  // A loop head's let/const live in a scope of their own, around the body.
  C.loopScope = function (declaration, scope) {
    if (!declaration || declaration.type !== 'VariableDeclaration' ||
        declaration.kind === 'var') return scope;
    const names = new Set();
    for (const d of declaration.declarations) patternNames(d.id, names);
    return scopeOf(scope, names);
  };

  C.forInOf = function (node, scope) {
    const inner = this.loopScope(node.left, scope);
    if (node.left.type === 'VariableDeclaration') {
      this.visit(node.left, inner);
    } else {
      const head = this.excerpt(node.left) + (node.type === 'ForInStatement' ? ' in ' : ' of ') +
        '\u2026)';
      this.target(node.left, inner, { shown: 'for (' + head, declared: 'for (const ' + head,
        reads: false });
    }
    this.visit(node.right, inner);
    this.visit(node.body, inner);
  };

  C.literal = function (node) {
    const raw = node.raw;
    if (typeof node.value === 'number' && /^0[0-9]/.test(raw)) {
      const octal = /^[0-7]+$/.test(raw);
      const what = octal ? '` is a legacy octal literal: write 0o' + raw.slice(1) + ' (or ' +
        Number(raw.slice(1)) + ' if decimal was meant)'
        : '` is a decimal with a leading zero: write ' + Number(raw);
      this.report(node.start, 'octal', '`' + raw + what);
    } else if (typeof node.value === 'string') {
      this.escapes(node);
    }
  };

  // Octal escapes (\1, \01, \377) and \8 \9 in a string literal's text.
  C.escapes = function (node) {
    const raw = node.raw;
    for (let i = 0; i < raw.length; i++) {
      if (raw[i] !== '\\') continue;
      const next = raw[i + 1] || '';
      const octal = /^(?:[0-3][0-7]{0,2}|[4-7][0-7]?)/.exec(raw.slice(i + 1, i + 4));
      if (next === '8' || next === '9') {
        this.report(node.start + i, 'octal-escape', '`\\' + next + '` is not an escape in ' +
          'strict mode: write ' + next + ' without the backslash');
      } else if (octal && (octal[0] !== '0' || /[89]/.test(raw[i + 2] || ''))) {
        const code = parseInt(octal[0], 8);
        const hex = (code < 16 ? '0' : '') + code.toString(16);
        this.report(node.start + i, 'octal-escape', '`\\' + octal[0] + '` is an octal escape: ' +
          'write \\x' + hex + ' instead');
      }
      i += 1;  // the escaped character is not a backslash of its own
    }
  };

  const HANDLERS = {
    FunctionDeclaration: C.fn,
    FunctionExpression: C.fn,
    ArrowFunctionExpression: C.fn,
    BlockStatement(node, scope) { this.block(node.body, scope); },
    StaticBlock(node, scope) { this.all(node.body, functionScope(scope, node, [], false)); },
    SwitchStatement(node, scope) {
      this.visit(node.discriminant, scope);
      const statements = [];
      for (const c of node.cases) statements.push(...c.consequent);
      const inner = scopeOf(scope, lexicalNames(statements, new Set()));
      for (const c of node.cases) { this.visit(c.test, inner); this.all(c.consequent, inner); }
    },
    ClassExpression(node, scope) {
      const inner = node.id ? scopeOf(scope, new Set([node.id.name])) : scope;
      this.visit(node.superClass, inner);
      this.visit(node.body, inner);
    },
    CatchClause(node, scope) {
      const inner = scopeOf(scope, patternNames(node.param, new Set()));
      this.visit(node.param, inner);
      this.visit(node.body, inner);
    },
    ForStatement(node, scope) {
      const inner = this.loopScope(node.init, scope);
      this.all([node.init, node.test, node.update, node.body].filter(Boolean), inner);
    },
    ForInStatement: C.forInOf,
    ForOfStatement: C.forInOf,
    WithStatement(node, scope) {
      this.report(node.start, 'with', '`with` is not allowed: name the object instead ' +
        '(const o = \u2026; then o.name)');
      this.visit(node.object, scope);
      this.visit(node.body, scopeOf(scope, new Set(), true));
    },
    AssignmentExpression(node, scope) {
      const shown = node.left.type === 'Identifier' ? node.left.name + ' ' + node.operator +
        ' \u2026' : this.excerpt(node.left) + ' ' + node.operator + ' \u2026';
      this.target(node.left, scope, { shown, reads: node.operator !== '=' });
      this.visit(node.right, scope);
    },
    UpdateExpression(node, scope) {
      if (node.argument.type !== 'Identifier') { this.visit(node.argument, scope); return; }
      const name = node.argument.name;
      this.assigned(node.argument, scope,
        { shown: node.prefix ? node.operator + name : name + node.operator, reads: true });
    },
    UnaryExpression(node, scope) {
      if (node.operator === 'delete' && node.argument.type === 'Identifier') {
        this.report(node.start, 'delete', '`delete ' + node.argument.name + '` deletes a ' +
          'plain name, which strict mode refuses: delete a property (delete obj.' +
          node.argument.name + ') or set the variable to undefined');
        return;
      }
      this.visit(node.argument, scope);
    },
    Literal(node) { this.literal(node); },
  };

  function check(source) {
    const checker = new Checker(source);
    try {
      const ast = acorn.parse(source, OPTIONS);
      // The job body is an async function's body: its vars and functions are its own.
      checker.all(ast.body, functionScope(null, ast, [], true));
    } catch (err) {
      // A syntax error is the syntax check's to report; nesting too deep for the
      // stack (a RangeError) leaves nothing this check can say.
      if (err instanceof SyntaxError || err instanceof RangeError) return { ok: false };
      throw err;
    }
    checker.found.sort((a, b) => a.line - b.line || a.column - b.column);
    return { ok: true, findings: checker.found, more: checker.more };
  }

  globalThis.__webjob_strict_check = (source) => JSON.stringify(check(String(source)));
})();
