// Element types of the language: the table `help` reads, and the helpers the checker uses.

import type { Scalar } from './ir.js';

export type ElemType =
  | { kind: 'scalar'; name: Scalar }
  | { kind: 'vec'; name: 'vec2' | 'vec3' | 'vec4'; size: 2 | 3 | 4 }
  | { kind: 'struct'; name: string; fields: { name: string; type: ElemType }[] };

export const F32: ElemType = { kind: 'scalar', name: 'f32' };
export const I32: ElemType = { kind: 'scalar', name: 'i32' };
export const BOOL: ElemType = { kind: 'scalar', name: 'bool' };
export const vec = (size: 2 | 3 | 4): ElemType => ({ kind: 'vec', name: `vec${size}`, size });

/** The built-in element types, for the checker and for `help`. */
export const TYPES: { name: string; summary: string; components: number }[] = [
  { name: 'f32', summary: 'a 32-bit IEEE float', components: 1 },
  { name: 'i32', summary: 'a 32-bit integer; arithmetic wraps around', components: 1 },
  { name: 'bool', summary: 'true or false (stored in fields as 0 or 1)', components: 1 },
  { name: 'vec2', summary: 'two f32 components: .x .y (also .r .g)', components: 2 },
  { name: 'vec3', summary: 'three f32 components: .x .y .z (also .r .g .b)', components: 3 },
  { name: 'vec4', summary: 'four f32 components: .x .y .z .w (also .r .g .b .a)', components: 4 },
  { name: 'field1<T>', summary: 'a 1-D field of elements of type T (a port type)', components: 0 },
  { name: 'field2<T>', summary: 'a 2-D field of elements of type T (a port type)', components: 0 },
  { name: 'field3<T>', summary: 'a 3-D field of elements of type T (a port type)', components: 0 },
  { name: 'struct', summary: 'a record of named element-typed fields: `struct P { pos: vec2; mass: f32; }`', components: 0 },
];

export function builtinElemType(name: string): ElemType | undefined {
  switch (name) {
    case 'f32': return F32;
    case 'i32': return I32;
    case 'bool': return BOOL;
    case 'vec2': return vec(2);
    case 'vec3': return vec(3);
    case 'vec4': return vec(4);
  }
  return undefined;
}

/** The scalar components of an element: vec4 -> 4 x f32; a struct -> its fields' in order. */
export function components(t: ElemType): Scalar[] {
  if (t.kind === 'scalar') return [t.name];
  if (t.kind === 'vec') return new Array(t.size).fill('f32');
  return t.fields.flatMap((f) => components(f.type));
}

export function sameType(a: ElemType, b: ElemType): boolean {
  return a.kind === b.kind && a.name === b.name;
}

export function typeName(t: ElemType): string {
  return t.name;
}

/** A type's name with its article, as a sentence says it: "an f32", "an i32", "a vec3". */
export function aType(name: string): string {
  return /^([fi]\d|[aeiou])/.test(name) ? `an ${name}` : `a ${name}`;
}

export function isNumeric(t: ElemType): boolean {
  return t.kind === 'scalar' && t.name !== 'bool';
}

/** Swizzle letters and the component each names. */
export const SWIZZLE: Record<string, number> = { x: 0, y: 1, z: 2, w: 3, r: 0, g: 1, b: 2, a: 3 };
