// structuredClone: the HTML structured clone of plain data (objects, arrays, primitives
// and their boxes, Date, RegExp, Map, Set, ArrayBuffer and views, errors; cycles and
// shared references kept; transfer of ArrayBuffers). Evaluated after web/base.js, whose
// helpers it takes (see there for why every intrinsic is captured).
(() => {
  'use strict';
  const { G, def, defineProperty, getPrototypeOf, getOwnPropertyDescriptor, keys, hasOwn, uncurry, getter, U8, sl,
    taSet, taBuf, taOff, taLen, taTag, abLen, isView, brand, isAB, toStr, domErr } = globalThis.__webjob_web;
  const TypeErr = TypeError, isArray = Array.isArray, Obj = Object, Arr = Array, AB = ArrayBuffer, DV = DataView;
  const Map_ = Map, Set_ = Set, Date_ = Date, RegExp_ = RegExp, isError = Error.isError;
  const ERRORS = [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError];
  const TAS = [Int8Array, U8, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array,
    Float64Array, BigInt64Array, BigUint64Array, G.Float16Array];
  const ABP = AB.prototype, DVP = DV.prototype, MP = Map.prototype, SetP = Set.prototype;
  const aIncludes = uncurry(Array.prototype.includes), objToStr = uncurry(Obj.prototype.toString);
  const dvBuf = getter(DVP, 'buffer'), dvOff = getter(DVP, 'byteOffset'), dvLen = getter(DVP, 'byteLength');
  const abSlice = uncurry(ABP.slice), mapGet = uncurry(MP.get), mapSet = uncurry(MP.set), mapEach = uncurry(MP.forEach);
  const mapSize = getter(MP, 'size'), setAdd = uncurry(SetP.add), setSize = getter(SetP, 'size');
  const setEach = uncurry(SetP.forEach), dateGet = uncurry(Date.prototype.getTime);
  const reSrc = getter(RegExp.prototype, 'source'), reFlags = getter(RegExp.prototype, 'flags');
  const weakMapHas = uncurry(WeakMap.prototype.has), weakSetHas = uncurry(WeakSet.prototype.has);
  const boxes = [uncurry(Number.prototype.valueOf), uncurry(String.prototype.valueOf),
    uncurry(Boolean.prototype.valueOf), uncurry(BigInt.prototype.valueOf)];
  const symVal = uncurry(Symbol.prototype.valueOf);
  // the newer ArrayBuffer members, where this V8 has them
  const optional = (k) => { const d = getOwnPropertyDescriptor(ABP, k); return d && uncurry(d.get || d.value); };
  const abTransfer = optional('transfer'), abResizable = optional('resizable'), abMax = optional('maxByteLength');
  const abDetached = optional('detached');

  const OP = Obj.prototype, TA = { __proto__: null }, ERR = { __proto__: null };
  for (let i = 0; i < TAS.length; i++) if (TAS[i]) TA[TAS[i].name] = TAS[i];
  for (let i = 0; i < ERRORS.length; i++) ERR[ERRORS[i].name] = ERRORS[i];
  const cloneErr = (what) => domErr(what + ' could not be cloned.', 'DataCloneError');
  const UNCLONABLE = ['Promise', 'WeakRef', 'FinalizationRegistry', 'Generator', 'AsyncGenerator'];
  const KEY = {};
  function copyProps(v, c, mem) {
    const ks = keys(v);
    for (let i = 0; i < ks.length; i++) {
      const k = ks[i];
      if (!hasOwn(v, k)) continue;
      const x = clone(v[k], mem);
      if (k === '__proto__') defineProperty(c, k, { value: x, writable: true, enumerable: true, configurable: true });
      else c[k] = x;
    }
    return c;
  }
  function cloneSpecial(v, mem) {
    let c;
    if (isView(v)) {
      const tag = taTag(v);
      if (tag !== undefined) c = new TA[tag](clone(taBuf(v), mem), taOff(v), taLen(v));
      else c = new DV(clone(dvBuf(v), mem), dvOff(v), dvLen(v));
    } else if (isAB(v)) {
      if (abDetached && abDetached(v)) throw cloneErr('A detached ArrayBuffer');
      if (abResizable && abResizable(v)) {
        c = new AB(abLen(v), { maxByteLength: abMax(v) });
        taSet(new U8(c), new U8(v));
      } else c = abSlice(v, 0);
    } else if (brand(dateGet, v)) c = new Date_(dateGet(v));
    else if (brand(reSrc, v)) c = new RegExp_(reSrc(v), reFlags(v));
    else if (brand(mapSize, v)) {
      const e = [];
      mapEach(v, (val, key) => { e[e.length] = key; e[e.length] = val; });
      mapSet(mem, v, c = new Map_());
      for (let i = 0; i < e.length; i += 2) mapSet(c, clone(e[i], mem), clone(e[i + 1], mem));
      return c;
    } else if (brand(setSize, v)) {
      const e = [];
      setEach(v, (val) => { e[e.length] = val; });
      mapSet(mem, v, c = new Set_());
      for (let i = 0; i < e.length; i++) setAdd(c, clone(e[i], mem));
      return c;
    } else if (isError ? isError(v) : objToStr(v) === '[object Error]') {
      const name = v.name, md = getOwnPropertyDescriptor(v, 'message');
      mapSet(mem, v, c = new ERR[typeof name === 'string' && name in ERR ? name : 'Error']());
      if (md && 'value' in md) def(c, 'message', toStr(md.value));
      const sd = getOwnPropertyDescriptor(v, 'stack');
      if (sd && typeof sd.value === 'string') def(c, 'stack', sd.value);
      if (hasOwn(v, 'cause')) def(c, 'cause', clone(v.cause, mem));
      return c;
    } else {
      for (let i = 0; i < boxes.length; i++) if (brand(boxes[i], v)) { c = Obj(boxes[i](v)); break; }
      if (!c) {
        if (brand(symVal, v) || brand((x) => weakMapHas(x, KEY), v) || brand((x) => weakSetHas(x, KEY), v)) {
          throw cloneErr('#<Object>');
        }
        const tag = sl(objToStr(v), 8, -1);
        if (aIncludes(UNCLONABLE, tag)) throw cloneErr('#<' + tag + '>');
        return undefined;
      }
    }
    mapSet(mem, v, c);
    return c;
  }
  function clone(v, mem) {
    const t = typeof v;
    if (t === 'function') throw cloneErr(v.name ? '' + v.name : 'function');
    if (t === 'symbol') throw cloneErr('Symbol()');
    if (t !== 'object' || v === null) return v;
    let c = mapGet(mem, v);
    if (c !== undefined) return c;
    if (isArray(v)) { mapSet(mem, v, c = new Arr(v.length)); return copyProps(v, c, mem); }
    const proto = getPrototypeOf(v);
    if (proto !== OP && proto !== null && (c = cloneSpecial(v, mem)) !== undefined) return c;
    mapSet(mem, v, c = {});
    return copyProps(v, c, mem);
  }
  // a method, as built-ins are: no prototype property, not a constructor
  const fns = {
    structuredClone(value, options = undefined) {
      if (!arguments.length) throw new TypeErr('Failed to execute \'structuredClone\': 1 argument required, but only 0 present.');
      const transfer = [];
      if (options !== undefined && options !== null && options.transfer !== undefined) {
        for (const t of options.transfer) {
          if (!isAB(t)) throw cloneErr('Value not transferable:');
          if (aIncludes(transfer, t)) throw cloneErr('A duplicate ArrayBuffer in the transfer list');
          transfer[transfer.length] = t;
        }
      }
      const out = clone(value, new Map_());
      if (abTransfer) for (let i = 0; i < transfer.length; i++) abTransfer(transfer[i]);
      return out;
    }
  };
  def(G, 'structuredClone', fns.structuredClone);
})();
//# sourceURL=webjobs:web/clone
