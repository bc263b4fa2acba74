// The step debugger's instrumentation, run in its own V8 context after acorn's
// dist/acorn.js. __webjob_instrument(source) parses a job body with acorn (never
// with regular expressions) and returns, as JSON, {ok, code, pausable, points} or
// {ok: false, error: {message, line, column}}. `code` has a pause before every
// statement of async code (the job body, async functions, arrows and methods):
//   await __dbg.pause(line, column, scope);
// and `debugger;` / `breakpoint(args)` in async code become
//   await __dbg.breakpoint(line, column, scope[, args])
// where `scope` is a function returning {name: value} for every name in scope,
// each read through __dbg.v(() => name) so that a name in its TDZ does not throw;
// the job globals the job names are grouped under the key '<globals>'. Every
// pause also passes its function's frame: an async function with statements
// starts `const __dbg_f = __dbg.enter(name, line); try {` and ends
// `} catch (__dbg_e) { __dbg.caught(__dbg_e, __dbg_f); throw __dbg_e; }
// finally { __dbg.leave(__dbg_f); }` (the job body awaits `__dbg.uncaught`
// instead of `caught`, on a line of its own after the source's last one), so the
// runtime knows the chain of async calls and where an exception came from. The
// catch rethrows what it caught: the job behaves as it would uninstrumented.
// Scopes share one getter per block, `function __dbg_sN() {...}`, defined at the
// block's start. Text is only inserted on the same line, or replaced by text with
// the same line breaks, so every line keeps its number: stack traces, error lines
// and pause lines all speak of the original source. Lines are 1-based, columns
// 1-based.
(function () {
  'use strict';
  // The job runs as an async function body; parsing it the same way makes
  // `await` and `return` legal at its top level.
  const PREFIX = '(async function(){\n';
  const SUFFIX = '\n})';
  // Globals the sandbox defines for a job; a pause lists those the job names.
  const JOB_GLOBALS = ['params', 'request', 'response', 'db', 'http', 'console', 'sign',
    'verify', 'require', 'secrets', 'userID', 'isAuthenticated', 'limits'];
  const { FUNCTIONS, children, patternNames, hoistedVars, lexicalNames } = globalThis.__webjob_ast;
  // Statements a pause never precedes: hoisted declarations, nothing to run, or
  // statements whose own parts are paused on (a block's statements).
  const NOT_PAUSED = new Set(['FunctionDeclaration', 'ClassDeclaration', 'EmptyStatement',
    'BlockStatement', 'DebuggerStatement']);
  // ---- names ----------------------------------------------------------------

  // Every identifier the job names outside property keys and labels: the job
  // globals among them are shown at pauses.
  function referencedNames(node, out) {
    if (node.type === 'Identifier') { out.add(node.name); return out; }
    for (const child of children(node)) {
      if (child === node.label) continue;
      if (!node.computed && child === node.key) continue;
      if (node.type === 'MemberExpression' && !node.computed && child === node.property) continue;
      if (node.type === 'MetaProperty') continue;
      referencedNames(child, out);
    }
    return out;
  }

  // ---- edits ------------------------------------------------------------------

  // Edits are collected in source order of creation (outer before inner) and
  // applied together. At one offset: closings first (inner before outer), then
  // openings (outer before inner), then replacements.
  function Edits() { this.list = []; }
  Edits.prototype.open = function (at, text) { this.add(at, at, text, 1); };
  Edits.prototype.close = function (at, text) { this.add(at, at, text, 0); };
  Edits.prototype.replace = function (start, end, text) { this.add(start, end, text, 2); };
  Edits.prototype.add = function (start, end, text, rank) {
    this.list.push({ start, end, text, rank, seq: this.list.length });
  };
  Edits.prototype.apply = function (src) {
    const sorted = this.list.slice().sort((a, b) => a.start - b.start || a.rank - b.rank ||
      (a.rank === 0 ? b.seq - a.seq : a.seq - b.seq));
    let out = '';
    let cursor = 0;
    for (const e of sorted) {
      out += src.slice(cursor, e.start) + e.text;
      cursor = Math.max(cursor, e.end);
    }
    return out + src.slice(cursor);
  };

  // The line breaks of a replaced piece of text, re-emitted so that the lines
  // after it keep their numbers.
  function lineBreaks(text) {
    let out = '';
    for (const ch of text) {
      if (ch === '\n' || ch === '\r' || ch === '\u2028' || ch === '\u2029') out += ch;
    }
    return out;
  }

  // ---- the walk ---------------------------------------------------------------

  // `anchor`: where a function declaration can define the scope's getter once, to
  // be shared by every pause under it (a block's first offset); null when there
  // is no such place (loop heads, catch parameters, switch bodies...).
  function Scope(parent, names, anchor) {
    this.parent = parent;
    this.names = names;
    this.anchor = anchor === undefined ? null : anchor;
    this.getter = null;
  }

  function Instrumenter(wrapped, globals) {
    this.src = wrapped;
    this.globals = globals;
    this.edits = new Edits();
    this.points = [];
    this.count = 0;
    this.names = new Map();
  }
  const I = Instrumenter.prototype;

  I.isLocal = function (name, scope) {
    for (let s = scope; s; s = s.parent) if (s.names.has(name)) return true;
    return false;
  };

  const entry = (n) => n + ': __dbg.v(() => ' + n + ')';

  // The object of every name visible in `scope`, as an expression: the getter of
  // the nearest anchored scope spread first (or, at the top, the job globals the
  // job uses), then the names of the scopes in between, inner last, so that an
  // inner name shadows an outer one. Each read is TDZ-safe through __dbg.v.
  I.object = function (scope) {
    const chain = [];
    let s = scope;
    for (; s && (s.anchor === null || s.names.size === 0); s = s.parent) chain.unshift(s);
    const parts = s ? ['...' + this.define(s) + '()'] : [this.globalsGroup(chain)];
    for (const c of chain) for (const n of c.names) parts.push(entry(n));
    return '{' + parts.join(', ') + '}';
  };

  // The job globals under their own key, less those a local of the same name hides.
  I.globalsGroup = function (chain) {
    const local = new Set();
    for (const c of chain) for (const n of c.names) local.add(n);
    const shown = this.globals.filter((g) => !local.has(g));
    return "'<globals>': {" + shown.map(entry).join(', ') + '}';
  };

  // An anchored scope's getter, defined (hoisted, so usable anywhere in the
  // block) the first time a pause needs it: each pause stays short however many
  // names are in scope.
  I.define = function (scope) {
    if (scope.getter === null) {
      scope.getter = '__dbg_s' + (++this.count);
      const object = this.object(new Scope(scope.parent, scope.names));
      this.edits.open(scope.anchor, 'function ' + scope.getter + '() { return ' + object + '; } ');
    }
    return scope.getter;
  };

  // The scope argument of a pause: a function returning the visible names' values.
  // Scopes that declare nothing add nothing: their parent's getter serves.
  I.getter = function (scope) {
    let s = scope;
    while (s && s.names.size === 0) s = s.parent;
    return s && s.anchor !== null ? this.define(s) : '() => (' + this.object(s) + ')';
  };

  // A pause point's call: its line and 1-based column in the original source.
  // Its frame is the enclosing async function's, or null (an async arrow's
  // expression body has no statement to hold one; the runtime makes one up).
  I.call = function (kind, node, ctx) {
    const line = node.loc.start.line - 1;
    const column = node.loc.start.column + 1;
    this.points.push({ kind, line, column });
    return 'await __dbg.' + kind + '(' + line + ', ' + column + ', ' +
      this.getter(ctx.scope) + ', ' + (ctx.frame ? '__dbg_f' : 'null');
  };

  I.visit = function (node, ctx) {
    if (!node) return;
    this.nameFunctions(node);
    const handler = HANDLERS[node.type];
    if (handler) { handler.call(this, node, ctx); return; }
    for (const child of children(node)) this.visit(child, ctx);
  };

  I.statements = function (list, ctx) {
    for (const s of list) this.statement(s, ctx, false);
  };

  // A statement where a pause may go; `wrap` is for the single unbraced body of
  // if/else/loops, which needs braces to hold a second statement.
  I.statement = function (s, ctx, wrap) {
    if (ctx.async && this.pausable(s, ctx)) {
      this.edits.open(s.start, (wrap ? '{' : '') + this.call('pause', s, ctx) + ');');
      if (wrap) this.edits.close(s.end, '}');
    }
    this.visit(s, ctx);
  };

  I.pausable = function (s, ctx) {
    if (NOT_PAUSED.has(s.type)) return false;
    if (s.type === 'ExpressionStatement') {
      // A directive stops being one when something precedes it.
      return s.directive === undefined && !this.breakpointCall(s.expression, ctx);
    }
    return true;
  };

  I.body = function (s, ctx) {
    if (s.type === 'BlockStatement' || s.type === 'FunctionDeclaration') this.visit(s, ctx);
    else this.statement(s, ctx, true);
  };

  I.breakpointCall = function (expr, ctx) {
    const call = expr.type === 'ChainExpression' ? expr.expression : expr;
    return call.type === 'CallExpression' && call.callee.type === 'Identifier' &&
      call.callee.name === 'breakpoint' && !this.isLocal('breakpoint', ctx.scope) ? call : null;
  };

  // `breakpoint(args)` → `await __dbg.breakpoint(line, column, getter, args)`;
  // inside an expression it is parenthesised. Only the callee and `(` are
  // replaced, so edits inside the arguments stay valid.
  I.replaceBreakpoint = function (call, ctx, bare) {
    const args = call.arguments;
    const cut = args.length ? args[0].start : call.end;
    const head = (bare ? '' : '(') + this.call('breakpoint', call, ctx);
    const tail = args.length ? ', ' : ')';
    this.edits.replace(call.start, cut, head + tail + lineBreaks(this.src.slice(call.start, cut)));
    if (!bare) this.edits.close(call.end, ')');
    for (const a of args) this.visit(a, ctx);
  };

  I.fn = function (fn, ctx) {
    const names = new Set();
    if (fn.type === 'FunctionExpression' && fn.id) names.add(fn.id.name);
    for (const p of fn.params) patternNames(p, names);
    const block = fn.body.type === 'BlockStatement';
    if (block) lexicalNames(fn.body.body, hoistedVars(fn.body, names));
    // Directives stay first: the getter goes before the first other statement.
    const first = block ? fn.body.body.find((st) => st.directive === undefined) : undefined;
    const scope = new Scope(ctx.scope, names, first ? first.start : null);
    // Parameter defaults may not await, whatever the function.
    for (const p of fn.params) this.visit(p, { scope, async: false, frame: false });
    const framed = Boolean(fn.async && first);
    const inner = { scope, async: fn.async, frame: framed };
    if (framed) this.frame(fn, first, ctx.scope === null);
    if (block) { this.statements(fn.body.body, inner); return; }
    if (fn.async) {
      // An async arrow's expression body: `(await pause, expr)`.
      this.edits.open(fn.body.start, '(' + this.call('pause', fn.body, inner) + '), ');
      this.edits.close(fn.body.end, ')');
    }
    this.visit(fn.body, inner);
  };

  // The frame of an async function: opened before its first statement (and before
  // any scope getter, which then lives in the try block with the body's names),
  // closed before its closing brace. Both edits are made before the body is
  // walked, so they wrap every edit inside it.
  I.frame = function (fn, first, isJob) {
    const name = isJob ? '(job)' : this.fnName(fn);
    const line = isJob ? 1 : fn.loc.start.line - 1;
    this.edits.open(first.start, 'const __dbg_f = __dbg.enter(' + JSON.stringify(name) +
      ', ' + line + '); try { ');
    const handler = isJob ? 'await __dbg.uncaught(__dbg_e, __dbg_f)' :
      '__dbg.caught(__dbg_e, __dbg_f)';
    const close = ' } catch (__dbg_e) { ' + handler + '; throw __dbg_e; } ' +
      'finally { __dbg.leave(__dbg_f); }';
    // The job body's closing brace is the wrapper's: its text goes on a line of its
    // own after the source (whose last line may be a // comment).
    if (isJob) this.edits.close(this.src.length - SUFFIX.length, '\n' + close.slice(1));
    else this.edits.close(fn.body.end - 1, close);
  };

  I.fnName = function (fn) {
    if (fn.id) return fn.id.name;
    const given = this.names.get(fn);
    return given || (fn.type === 'ArrowFunctionExpression' ? '(arrow)' : '(anonymous)');
  };

  // The name a function gets from where it is written: `const f = async () => ...`,
  // `{ f: async function () {} }`, `async f() {}` in a class or object, `x.f = ...`.
  I.nameFunctions = function (node) {
    let key = null;
    let value = null;
    if (node.type === 'VariableDeclarator') { key = node.id; value = node.init; }
    else if (node.type === 'AssignmentExpression') { key = node.left; value = node.right; }
    else if (node.type === 'Property' || node.type === 'MethodDefinition' ||
      node.type === 'PropertyDefinition') { key = node.computed ? null : node.key; value = node.value; }
    if (!key || !value || !FUNCTIONS.has(value.type)) return;
    const name = key.type === 'Identifier' ? key.name :
      key.type === 'MemberExpression' && !key.computed ? key.property.name :
      key.type === 'Literal' ? String(key.value) : null;
    if (name) this.names.set(value, name);
  };

  I.loop = function (node, ctx) {
    const head = node.type === 'ForStatement' ? node.init : node.left;
    let inner = ctx;
    if (head && head.type === 'VariableDeclaration' && head.kind !== 'var') {
      const names = new Set();
      for (const d of head.declarations) patternNames(d.id, names);
      inner = { scope: new Scope(ctx.scope, names, null), async: ctx.async, frame: ctx.frame };
    }
    for (const part of [node.init, node.test, node.update, node.left, node.right]) {
      this.visit(part, inner);
    }
    this.body(node.body, inner);
  };

  function block(statements, ctx, anchor) {
    const names = lexicalNames(statements, new Set());
    return { scope: new Scope(ctx.scope, names, anchor), async: ctx.async, frame: ctx.frame };
  }

  const HANDLERS = {
    FunctionDeclaration: I.fn,
    FunctionExpression: I.fn,
    ArrowFunctionExpression: I.fn,
    ForStatement: I.loop,
    ForInStatement: I.loop,
    ForOfStatement: I.loop,
    BlockStatement(node, ctx) {
      this.statements(node.body, block(node.body, ctx, node.start + 1));
    },
    // Static blocks and field initialisers run synchronously: no await there.
    StaticBlock(node, ctx) { this.statements(node.body, block(node.body, { scope: ctx.scope })); },
    PropertyDefinition(node, ctx) {
      if (node.computed) this.visit(node.key, ctx);
      this.visit(node.value, { scope: ctx.scope, async: false, frame: false });
    },
    ClassExpression(node, ctx) {
      const names = new Set(node.id ? [node.id.name] : []);
      const inner = { scope: new Scope(ctx.scope, names, null), async: ctx.async,
        frame: ctx.frame };
      this.visit(node.superClass, inner);
      this.visit(node.body, inner);
    },
    SwitchStatement(node, ctx) {
      this.visit(node.discriminant, ctx);
      const inner = block(node.cases.flatMap((c) => c.consequent), ctx);
      for (const c of node.cases) {
        this.visit(c.test, inner);
        this.statements(c.consequent, inner);
      }
    },
    CatchClause(node, ctx) {
      const inner = { scope: new Scope(ctx.scope, patternNames(node.param, new Set()), null),
        async: ctx.async, frame: ctx.frame };
      this.visit(node.param, inner);
      this.visit(node.body, inner);
    },
    IfStatement(node, ctx) {
      this.visit(node.test, ctx);
      this.body(node.consequent, ctx);
      if (node.alternate) this.body(node.alternate, ctx);
    },
    WhileStatement(node, ctx) { this.visit(node.test, ctx); this.body(node.body, ctx); },
    DoWhileStatement(node, ctx) { this.body(node.body, ctx); this.visit(node.test, ctx); },
    WithStatement(node, ctx) { this.visit(node.object, ctx); this.body(node.body, ctx); },
    // The pause goes before the label: between label and loop it would take the
    // label from the loop (and break `continue label`).
    LabeledStatement(node, ctx) { this.visit(node.body, ctx); },
    DebuggerStatement(node, ctx) {
      const semi = this.src[node.end - 1] === ';' ? '' : ';';
      const text = ctx.async ? this.call('breakpoint', node, ctx) + ')' : 'void 0';
      this.edits.replace(node.start, node.start + 'debugger'.length, text + semi);
    },
    ExpressionStatement(node, ctx) {
      const call = ctx.async ? this.breakpointCall(node.expression, ctx) : null;
      // A bare statement gets no parentheses: a line starting with `(` could
      // continue the previous line's expression.
      if (call && call === node.expression) this.replaceBreakpoint(call, ctx, true);
      else this.visit(node.expression, ctx);
    },
    CallExpression(node, ctx) {
      if (ctx.async && this.breakpointCall(node, ctx)) {
        this.replaceBreakpoint(node, ctx, false);
        return;
      }
      for (const child of children(node)) this.visit(child, ctx);
    },
  };

  // ---- entry point -------------------------------------------------------------

  function position(wrapped, source, offset, loc) {
    const at = loc || acorn.getLineInfo(wrapped, offset);
    const last = acorn.getLineInfo(source, source.length).line;
    // Past the job's last line means the wrapper's closing line: an unclosed bracket.
    if (at.line - 1 > last) return { line: last, column: null };
    if (at.line < 2) return { line: 1, column: 1 };
    return { line: at.line - 1, column: at.column + 1 };
  }

  function syntaxError(err, wrapped, source) {
    const loc = err.loc || acorn.getLineInfo(wrapped, err.pos);
    const suffix = ' (' + loc.line + ':' + loc.column + ')';
    const message = err.message.endsWith(suffix) ?
      err.message.slice(0, -suffix.length) : err.message;
    return { message, ...position(wrapped, source, err.pos, loc) };
  }

  const OPTIONS = { ecmaVersion: 'latest', sourceType: 'script', locations: true,
    allowAwaitOutsideFunction: true };

  // The job function, or null when the body closes it early (`}); x(); (() => {`).
  function jobFunction(ast, wrapped) {
    const stmt = ast.body.length === 1 ? ast.body[0] : null;
    const fn = stmt && stmt.type === 'ExpressionStatement' ? stmt.expression : null;
    return fn && fn.type === 'FunctionExpression' && fn.end === wrapped.length - 1 ? fn : null;
  }

  function instrument(source) {
    const wrapped = PREFIX + source + SUFFIX;
    let ast;
    try {
      ast = acorn.parse(wrapped, OPTIONS);
    } catch (err) {
      if (!(err instanceof SyntaxError) || typeof err.pos !== 'number') throw err;
      return { ok: false, error: syntaxError(err, wrapped, source) };
    }
    const fn = jobFunction(ast, wrapped);
    if (!fn) {
      const first = ast.body[0].expression;
      const close = (first && first.type === 'FunctionExpression' ? first : ast.body[0]).end - 1;
      return { ok: false, error: { message: "Unexpected '}': the body closes its function early",
        ...position(wrapped, source, close, null) } };
    }
    const used = referencedNames(fn.body, new Set());
    const it = new Instrumenter(wrapped, JOB_GLOBALS.filter((g) => used.has(g)));
    it.fn(fn, { scope: null, async: true, frame: false });
    const out = it.edits.apply(wrapped);
    // A broken rewrite must fail loudly here, never as a confusing job error.
    acorn.parse(out, OPTIONS);
    const code = out.slice(PREFIX.length, out.length - SUFFIX.length);
    const pausable = [...new Set(it.points.map((p) => p.line))].sort((a, b) => a - b);
    return { ok: true, code, pausable, points: it.points };
  }

  globalThis.__webjob_instrument = (source) => JSON.stringify(instrument(String(source)));
})();
