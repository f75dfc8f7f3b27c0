// The API stack's templates as the infra tests read them. RefloopApi keeps its routes and workers in nested
// stacks (infra/cloud/route-groups.ts), so its resources are spread over several templates, and a value one
// template takes from another arrives as a nested stack parameter or output. flatTemplate merges a stack and
// its nested stacks into one template, with every such parameter and output replaced by the value it carries,
// so the assertions read the resources and references as if they were in one template; flatLogicalId names a
// construct's resource in it.
import { type CfnElement, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';

type Json = Record<string, any>;

/** The nested stacks directly under a stack. */
export function nestedStacksOf(stack: Stack): NestedStack[] {
  const found: NestedStack[] = [];
  const walk = (c: IConstruct) => {
    for (const child of c.node.children) {
      if (NestedStack.isNestedStack(child) && child.nestedStackParent === stack) found.push(child);
      else if (!Stack.isStack(child)) walk(child);
    }
  };
  walk(stack);
  return found;
}

/** The stack and every stack nested in it, at any depth. */
export function stackAndNested(stack: Stack): Stack[] {
  return [stack, ...nestedStacksOf(stack).flatMap((n) => stackAndNested(n))];
}

/** What flatTemplate puts before the logical ids of a nested stack's resources. */
function prefixOf(stack: Stack): string {
  return stack.nestedStackParent ? prefixOf(stack.nestedStackParent) + stack.node.id : '';
}

/** The logical id of a construct's resource (or of the resource itself) in flatTemplate of its top-level stack. */
export function flatLogicalId(construct: IConstruct): string {
  const element = (construct.node.defaultChild ?? construct) as CfnElement;
  const stack = Stack.of(element);
  return prefixOf(stack) + stack.getLogicalId(element);
}

function mapDeep(value: unknown, f: (v: Json) => unknown | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => mapDeep(v, f));
  if (value && typeof value === 'object') {
    const replaced = f(value as Json);
    if (replaced !== undefined) return replaced;
    return Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, mapDeep(v, f)]));
  }
  return value;
}

/** A stack's resources and outputs with its nested stacks merged in (ids relative to this stack). */
function flatten(stack: Stack): { Resources: Json; Outputs: Json; Parameters: Json } {
  const own = Template.fromStack(stack).toJSON();
  const resources: Json = { ...(own.Resources ?? {}) };
  const outputs: Json = { ...(own.Outputs ?? {}) };
  /** For each nested stack resource: its outputs, in this stack's ids. */
  const nestedOutputs = new Map<string, Json>();
  for (const nested of nestedStacksOf(stack)) {
    const inner = flatten(nested);
    const prefix = nested.node.id;
    const resourceId = stack.getLogicalId(nested.nestedStackResource as CfnElement);
    const passed = (resources[resourceId]?.Properties?.Parameters ?? {}) as Json;
    const local = new Set(Object.keys(inner.Resources));
    const rename = (v: unknown) =>
      mapDeep(v, (o) => {
        if (typeof o.Ref === 'string' && Object.keys(o).length === 1) {
          if (o.Ref in passed) return passed[o.Ref];
          if (local.has(o.Ref)) return { Ref: prefix + o.Ref };
          return o;
        }
        const getAtt = o['Fn::GetAtt'];
        if (Array.isArray(getAtt) && Object.keys(o).length === 1 && local.has(getAtt[0]))
          return { 'Fn::GetAtt': [prefix + getAtt[0], ...getAtt.slice(1)] };
        return undefined;
      });
    for (const [id, r] of Object.entries(inner.Resources)) {
      if (id in resources || prefix + id in resources) throw new Error(`flatTemplate: ${prefix}${id} is in two templates`);
      const renamed = rename(r) as Json;
      if (Array.isArray(renamed.DependsOn)) renamed.DependsOn = renamed.DependsOn.map((d: string) => (local.has(d) ? prefix + d : d));
      else if (typeof renamed.DependsOn === 'string' && local.has(renamed.DependsOn)) renamed.DependsOn = prefix + renamed.DependsOn;
      resources[prefix + id] = renamed;
    }
    nestedOutputs.set(
      resourceId,
      rename(Object.fromEntries(Object.entries(inner.Outputs).map(([k, o]) => [k, (o as Json).Value]))) as Json,
    );
  }
  // A nested stack's output read in this stack (a value passed from one nested stack to another, or output by
  // this stack): the value itself. Repeated while an output carries another.
  const resolveOutputs = (v: unknown): unknown =>
    mapDeep(v, (o) => {
      const getAtt = o['Fn::GetAtt'];
      if (!Array.isArray(getAtt) || Object.keys(o).length !== 1) return undefined;
      const values = nestedOutputs.get(getAtt[0]);
      const name = /^Outputs\.(.+)$/.exec(String(getAtt[1]))?.[1];
      if (!values || name === undefined) return undefined;
      if (!(name in values)) throw new Error(`flatTemplate: no output ${name} in ${getAtt[0]}`);
      return resolveOutputs(values[name]);
    });
  return {
    Resources: resolveOutputs(resources) as Json,
    Outputs: resolveOutputs(outputs) as Json,
    Parameters: own.Parameters ?? {},
  };
}

/** A stack and its nested stacks as one template (see the top of this file). */
export function flatTemplate(stack: Stack): Template {
  const flat = flatten(stack);
  return Template.fromJSON({ ...Template.fromStack(stack).toJSON(), ...flat }, { skipCyclicalDependenciesCheck: true });
}

/** CloudFormation's quota of resources per template. */
export const CFN_RESOURCE_LIMIT = 500;
