// eslint for the sandbox JavaScript (hub/engine/js/*.js), run by `make lint` and
// tests/engine/test_js_lint.py. These files are plain scripts that the worker
// evaluates in a bare V8 isolate: no browser and no node globals, no modules, so
// an unknown name is a bug here (it would be a ReferenceError at run time).
// The approved npm modules (hub/engine/js/modules) are other people's code, and
// not linted. Only rules that catch bugs are on; layout is not this tool's job.
'use strict';

const path = require('node:path');
const js = require('@eslint/js');

// The repository root: file patterns below are relative to it whatever the
// directory eslint is started from.
const ROOT = path.resolve(__dirname, '..', '..');

// The sandbox scripts run in a bare V8 isolate: the ES2025 built-ins, which
// `ecmaVersion` declares (SharedArrayBuffer, Atomics, WeakRef...), and in the warm
// engine what SES (the `ses` module, evaluated first) adds. Nothing else: the
// host's functions are read as properties of globalThis, never as bare names.
const SANDBOX_GLOBALS = {
  lockdown: 'readonly',
  harden: 'readonly',
  Compartment: 'readonly',
};

// The hub's acorn context (the step debugger's instrumentation, the strict-mode
// check of a job) is a V8 context of its own, after acorn's dist/acorn.js: it has
// acorn and nothing of SES.
const ACORN_CONTEXT = ['hub/engine/js/ast_names.js', 'hub/engine/js/debug_instrument.js',
  'hub/engine/js/strict_check.js'];

module.exports = [
  {
    basePath: ROOT,
    ignores: ['hub/engine/js/modules/**'],
  },
  {
    basePath: ROOT,
    files: ['hub/engine/js/**/*.js'],
    ...js.configs.recommended,
  },
  {
    basePath: ROOT,
    files: ['hub/engine/js/**/*.js'],
    languageOptions: {
      ecmaVersion: 2025,
      sourceType: 'script',
      globals: SANDBOX_GLOBALS,
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // Unused parameters before a used one are the signature's; an unused caught
      // error is `catch (e) { /* a hostile getter threw: carry on */ }`, on purpose.
      'no-unused-vars': ['error', { args: 'after-used', caughtErrors: 'none' }],
      // A script's top-level declarations would be globals that every job sees.
      'no-implicit-globals': 'error',
      // `==` only where it is the idiom (`x == null`), never by accident.
      eqeqeq: ['error', 'smart'],
      'no-self-compare': 'error',
      'no-template-curly-in-string': 'error',
      'no-unmodified-loop-condition': 'error',
      'no-unreachable-loop': 'error',
      'no-constructor-return': 'error',
      'no-promise-executor-return': 'error',
      'no-new-wrappers': 'error',
      'no-eval': 'error',
      'no-implied-eval': 'error',
      // Only uses in the same scope before the declaration: those throw (TDZ) when
      // the line runs; a use inside a function that runs later is fine.
      'no-use-before-define': ['error', { functions: false, classes: false, variables: false }],
      'array-callback-return': 'error',
      'no-caller': 'error',
      'no-extend-native': 'error',
      'no-proto': 'error',
      'no-throw-literal': 'error',
      strict: ['error', 'function'],
    },
  },
  {
    basePath: ROOT,
    files: ACORN_CONTEXT,
    // Config objects merge their globals: 'off' takes the SES names away again.
    languageOptions: {
      globals: { acorn: 'readonly', lockdown: 'off', harden: 'off', Compartment: 'off' },
    },
  },
];
