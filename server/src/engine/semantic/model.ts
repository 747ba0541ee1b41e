// The semantic layer that every rule shares, built once per syntax tree: imports and their aliases, functions and
// classes, loops, no-grad contexts, which expressions hold graph-attached tensors, and which calls are forwards,
// backwards, optimizer steps and gradient clears (also through functions of the same file).
import { LayeredMap } from './layered-map';
import type { Node, Tree } from '../parser';
import { queryMatches } from '../queries';
import type { QueryCaptures } from '../queries';
import { copyTree, SyntaxNode } from '../syntax-tree';
import type { StatementCollector } from '../syntax-tree';
import {
  callArguments,
  calleeName,
  callReceiver,
  children,
  contains,
  dottedName,
  enclosingFunction,
  enclosingLoops,
  innermostLoop,
  lowerBound,
  lowerBoundBy,
  nameWords,
  nodesWithin,
  statementSpells,
  spelledWhenCounted,
  countStatementsSpelling,
} from '../syntax';
import {
  DETACHING_ATTRIBUTES,
  DETACHING_FUNCTIONS,
  DETACHING_METHODS,
  DETACHING_TORCH_FUNCTIONS,
  FUNCTIONAL_LOSSES,
  LIGHTNING_NO_GRAD_HOOKS,
  looksLikeDataName,
  looksLikeLossFunctionName,
  looksLikeModelAccessor, looksLikeComputationMethod,
  looksLikeModelName,
  looksLikeOptimizerName,
  looksLikeSchedulerName,
  VALUES_AND_INDICES,
} from './names';
import { NodeMemo } from '../node-memo';

export interface FunctionInfo {
  node: Node;
  name: string;
  /** The class whose body defines this method, if any. */
  classInfo?: ClassInfo;
  decorators: Node[];
  body: Node | null;
}

export interface ClassInfo {
  node: Node;
  name: string;
  baseNames: string[];
  isModule: boolean;
  /** A LightningModule, directly or through classes of this file. */
  isLightning: boolean;
}

/** One binding of a name: an assignment, a loop target, a parameter, an import. */
export interface Definition {
  /** The node whose value the name takes (an expression), or undefined for parameters and loop targets. */
  value?: Node;
  /** For `a, b = f()`: the position of the name in the pattern. */
  index?: number;
  /** The statement or target node, for ordering and no-grad checks. */
  site: Node;
  kind: 'assign' | 'augmented' | 'for' | 'param' | 'with' | 'import' | 'walrus';
}

interface FunctionSummary {
  backward: boolean;
  step: boolean;
  clear: boolean;
  forward: boolean;
}

const INTERESTING_TYPES = [
  'call', 'assignment', 'augmented_assignment', 'for_statement', 'while_statement', 'function_definition',
  'class_definition', 'with_statement', 'import_statement', 'import_from_statement', 'named_expression',
  'delete_statement', 'return_statement',
];

export class SemanticModel {
  readonly root: Node;
  /** The tree-sitter tree `root` was copied from, for the rules' .scm queries (asked for when first needed). */
  private readonly sourceTree: () => Tree | undefined;
  /**
   * The whole-file lists of indexed nodes in document order, each made on first use from the top-level statements'
   * own lists: an edit's analysis reads only the parts it needs (nodesWithin), where a copy of each list per
   * version cost a long file's every keystroke.
   */
  private readonly nodeLists = new Map<NodeListKind, readonly Node[]>();
  readonly functions: FunctionInfo[] = [];
  readonly classes: ClassInfo[] = [];
  /** Local name → fully qualified name (`nn` → `torch.nn`, `DP` → `torch.nn.DataParallel`). */
  readonly imports = new Map<string, string>();

  private functionsByName: Map<string, FunctionInfo[]> = new Map();
  /** Per method name, the first method of that name of each class, by the class's node id (methodOfClass). */
  private readonly methodsByClass = new Map<string, Map<number, FunctionInfo>>();
  private readonly definitionsByScope = new Map<number, Map<string, Definition[]>>();
  private readonly attachedMemo = new Map<number, boolean>();
  private readonly attachedInProgress = new Set<number>();
  private readonly summaryMemo = new Map<number, FunctionSummary>();
  // Shared with the next version's model while no assignment that teaches roles changed (deriveFrom).
  private readonly modelNames: Set<string> = new Set();
  private readonly lossFunctionNames: Set<string> = new Set();
  private readonly optimizerNames: Set<string> = new Set();
  private readonly scalerNames: Set<string> = new Set();
  private readonly classInstances: Map<string, ClassInfo> = new Map();
  /** The end of each top-level statement when the model was built (see deriveFrom). */
  private readonly statementEnds: number[];
  private readonly gradModeCalls: Node[] = [];
  private readonly noGradFunctionMemo = new Map<number, boolean>();
  private readonly callersMemo = new Map<number, readonly Node[]>();
  /** Per function name, the calls by that name grouped by the local function each resolves to (see callersOf). */
  private callersByName: Map<string, ReadonlyMap<number, readonly Node[]>> = new Map();
  private readonly backpropagatedMemo = new Map<number, Map<string, number[]>>();
  private readonly lossFunctionRefByName = new Map<string, boolean>();

  /**
   * Built from a tree-sitter tree and the text it was parsed from (positions index into it), or from a copy
   * the caller already made (DocumentStore reuses unchanged statements between versions).
   */
  constructor(tree: Tree | SyntaxNode, text?: string, sourceTree?: Tree | (() => Tree | undefined), previous?: SemanticModel) {
    this.root = tree instanceof SyntaxNode ? tree : copyTree(tree, text ?? tree.rootNode.text, STATEMENT_NODES_COLLECTOR);
    this.sourceTree = tree instanceof SyntaxNode ? (typeof sourceTree === 'function' ? sourceTree : () => sourceTree) : () => tree;
    this.statementEnds = this.root.children.map((statement) => statement.endIndex);
    const derived = previous && tree instanceof SyntaxNode ? this.deriveFrom(previous) : undefined;
    if (!derived) this.build();
    for (const call of this.callsNamed('set_grad_enabled')) {
      if (this.qualifiedTail(call.childForFieldName('function')) === 'set_grad_enabled' && call.parent?.type === 'expression_statement') {
        this.gradModeCalls.push(call);
      }
    }
  }

  /** Every call in document order. */
  get calls(): readonly Node[] {
    return this.nodeList('calls');
  }

  get assignments(): readonly Node[] {
    return this.nodeList('assignments');
  }

  get augmentedAssignments(): readonly Node[] {
    return this.nodeList('augmentedAssignments');
  }

  get loops(): readonly Node[] {
    return this.nodeList('loops');
  }

  get withStatements(): readonly Node[] {
    return this.nodeList('withStatements');
  }

  get deleteStatements(): readonly Node[] {
    return this.nodeList('deleteStatements');
  }

  get returnStatements(): readonly Node[] {
    return this.nodeList('returnStatements');
  }

  /** One whole-file list: the top-level statements' lists one after another (made once per version). */
  private nodeList(kind: NodeListKind): readonly Node[] {
    let list = this.nodeLists.get(kind);
    if (!list) {
      const nodes: Node[] = [];
      for (const statement of this.root.children) for (const node of statementNodes(statement)[kind]) nodes.push(node);
      this.nodeLists.set(kind, (list = nodes));
    }
    return list;
  }

  /**
   * The nodes of one list that start inside `region` (syntax.ts's nodesWithin over the whole-file list), read from
   * the lists of the top-level statements it overlaps unless the whole-file list is already made.
   */
  nodesWithin(kind: NodeListKind, region: { startIndex: number; endIndex: number }): Node[] {
    const list = this.nodeLists.get(kind);
    if (list) return nodesWithin(list, region);
    const statements = this.root.children;
    const result: Node[] = [];
    // The first statement that ends after the region starts: no node of an earlier one starts inside it.
    for (let i = lowerBoundBy(statements, region.startIndex + 1, (statement) => statement.endIndex); i < statements.length && statements[i]!.startIndex < region.endIndex; i++) {
      const nodes = statementNodes(statements[i]!)[kind];
      for (let j = lowerBound(nodes, region.startIndex); j < nodes.length && nodes[j]!.startIndex < region.endIndex; j++) result.push(nodes[j]!);
    }
    return result;
  }

  /** Builds the whole-file lists and tables from every statement. */
  private build(): void {
    for (const statement of this.root.children) {
      // The nodes of a statement moved unchanged from the previous version are already sorted by kind.
      const nodes = statementNodes(statement);
      // Imports, classes and functions in document order: a class's bases are qualified by the imports before it.
      for (const node of nodes.structure) {
        if (node.type === 'class_definition') this.collectClass(node);
        else if (node.type === 'function_definition') this.collectFunction(node);
        else this.collectImport(node);
      }
    }
    this.inheritLightning();
    const classesById = new Map(this.classes.map((cls) => [cls.node.id, cls] as const));
    for (const info of this.functions) info.classInfo = this.classOfMethod(info.node, classesById);
    this.learnRolesFromAssignments();
  }

  /**
   * Builds this version's lists and tables from the previous version's model when a few top-level statements
   * changed and none of them changes what the others are read with: no import, classes that say the same (name,
   * bases, forward), so the same qualified names, classes and roles hold. Each whole-file list is the previous one
   * with the changed statements' part replaced (unchanged statements are the same objects, moved in place); the
   * roles of names are shared when the changed statements teach the same ones. Returns false, having changed
   * nothing, when the whole file must be read.
   */
  private deriveFrom(previous: SemanticModel): boolean {
    const now = this.root.children;
    const before = previous.root.children;
    let prefix = 0;
    while (prefix < now.length && prefix < before.length && now[prefix] === before[prefix]) prefix++;
    let suffix = 0;
    while (suffix < now.length - prefix && suffix < before.length - prefix && now[now.length - 1 - suffix] === before[before.length - 1 - suffix]) suffix++;
    const beforeChanged = before.slice(prefix, before.length - suffix);
    const nowChanged = now.slice(prefix, now.length - suffix);
    if (beforeChanged.length + nowChanged.length > MAX_DERIVED_STATEMENTS) return false;
    const removed = beforeChanged.map(statementNodes);
    const added = nowChanged.map(statementNodes);
    // The nodes of the leading unchanged statements lie before `boundary`, in both versions, and all others after
    // it: the leading statements must not have moved (an edit before them moves them in place).
    if (prefix > 0 && previous.statementEnds[prefix - 1] !== now[prefix - 1]!.endIndex) return false;
    const boundary = prefix > 0 ? now[prefix - 1]!.endIndex : 0;
    const oldStructure = removed.flatMap((nodes) => nodes.structure);
    const newStructure = added.flatMap((nodes) => nodes.structure);
    if ([...oldStructure, ...newStructure].some((node) => node.type === 'import_statement' || node.type === 'import_from_statement')) return false;
    const oldClasses = oldStructure.filter((node) => node.type === 'class_definition');
    const newClasses = newStructure.filter((node) => node.type === 'class_definition');
    const classKey = (node: Node) => {
      const { name, bases, hasForward } = classSyntax(node);
      return JSON.stringify([name, bases.map((base) => base.text), hasForward]);
    };
    if (oldClasses.length !== newClasses.length || oldClasses.some((node, i) => classKey(node) !== classKey(newClasses[i]!))) return false;

    // Imports are the same; a changed class keeps what the previous one was (same name and bases).
    for (const [name, qualified] of previous.imports) this.imports.set(name, qualified);
    const classFor = new Map<ClassInfo, ClassInfo>();
    const newClassInfos = newClasses.map((node, i) => {
      const old = previous.classes.find((cls) => cls.node === oldClasses[i])!;
      const info: ClassInfo = { ...old, node };
      classFor.set(old, info);
      return info;
    });
    const firstClass = lowerBoundBy(previous.classes, boundary, (cls) => cls.node.startIndex);
    spliceInto(this.classes, previous.classes, firstClass, oldClasses.length, [newClassInfos]);
    const classesById = new Map(newClassInfos.map((cls) => [cls.node.id, cls] as const));

    // Functions: new infos for the changed statements', the others shared.
    const oldFunctions = new Set(oldStructure.filter((node) => node.type === 'function_definition'));
    const newFunctionInfos = newStructure.filter((node) => node.type === 'function_definition').map((node) => {
      const info = functionInfoOf(node);
      info.classInfo = this.classOfMethod(node, classesById);
      return info;
    });
    const firstFunction = lowerBoundBy(previous.functions, boundary, (info) => info.node.startIndex);
    spliceInto(this.functions, previous.functions, firstFunction, oldFunctions.size, [newFunctionInfos]);
    // The previous version's names, read through (not copied); the names of the changed functions set again below.
    const byName = (this.functionsByName = new LayeredMap(previous.functionsByName));
    const renamed = new Set([...previous.functions.slice(firstFunction, firstFunction + oldFunctions.size), ...newFunctionInfos].map((info) => info.name));
    for (const name of renamed) {
      const list = (byName.get(name) ?? []).filter((info) => !oldFunctions.has(info.node));
      for (const info of newFunctionInfos) if (info.name === name) list.push(info);
      list.sort((a, b) => a.node.startIndex - b.node.startIndex);
      if (list.length > 0) byName.set(name, list);
      else byName.delete(name);
    }

    // Roles: the same when the changed statements' assignments teach the same (in the same order).
    const candidatesKey = (statements: StatementNodes[], nodes: readonly Node[]) => JSON.stringify(nodes.flatMap((node, i) =>
      statementRoleCandidates(node, statements[i]!).map((candidate) => [candidate.target, candidate.callee, candidate.receiver?.text ?? ''])));
    const sameRoles = candidatesKey(removed, beforeChanged) === candidatesKey(added, nowChanged);
    if (sameRoles) {
      const self = this as unknown as { modelNames: Set<string>; lossFunctionNames: Set<string>; optimizerNames: Set<string>; scalerNames: Set<string> };
      self.modelNames = previous.modelNames;
      self.lossFunctionNames = previous.lossFunctionNames;
      self.optimizerNames = previous.optimizerNames;
      self.scalerNames = previous.scalerNames;
      for (const [name, cls] of previous.classInstances) this.classInstances.set(name, classFor.get(cls) ?? cls);
    } else {
      this.learnRolesFromAssignments();
    }

    // The callers of a name's functions (callersOf) are found by resolving every call by that name: the same when no
    // changed statement defines a function or makes a call by that name and the names' roles are the same (objects
    // of the same classes). A long script resolved the calls of a common method name (`forward`) on every keystroke.
    // A name the changed statements call or define a method by is patched (patchedCallers): an edit of a class
    // resolved every `super().__init__()` of the file again.
    if (sameRoles) {
      const carried = new LayeredMap(previous.callersByName);
      const names = new Set(renamed);
      for (const statement of [...beforeChanged, ...nowChanged]) for (const name of calleeIndex(statement).keys()) names.add(name);
      const change: CallersChange = {
        beforeChanged, nowChanged,
        oldFunctions: previous.functions.slice(firstFunction, firstFunction + oldFunctions.size),
        newFunctions: newFunctionInfos,
        classPairs: oldClasses.map((node, i) => [node, newClasses[i]!] as const),
      };
      for (const name of names) {
        const callers = previous.callersByName.get(name);
        const patched = callers && this.patchedCallers(name, callers, change);
        if (patched) carried.set(name, patched);
        else carried.delete(name);
      }
      this.callersByName = carried;
      // The previous version may go on resolving callers (its pending facts): into a layer of its own, not into the
      // map this version reads through.
      previous.callersByName = new LayeredMap(previous.callersByName);
    }

    // Indexes by name over the statements (calls by callee, clear sites…): the changed statements' entries replaced,
    // in the order the previous version built them (an index's statements may read one built before it).
    for (const [key, index] of previous.statementIndexes) {
      if (!this.statementIndexes.has(key)) this.statementIndexes.set(key, deriveIndex(index, this, beforeChanged, nowChanged, boundary));
    }
    const calleeKeys = (statements: readonly Node[]) => [...new Set(statements.flatMap((statement) => [...calleeIndex(statement).keys()]))].sort().join('\n');
    // The names and bases of the file's classes are the same (see above): what is read of them alone is carried on,
    // and the classes by name with the changed classes' new infos in place of the old.
    for (const key of ['local-class-names', 'local-optimizer-classes']) {
      if (previous.namedMemo.has(key) && !this.namedMemo.has(key)) this.namedMemo.set(key, previous.namedMemo.get(key));
    }
    const classesByName = this.namedMemo.has('classes-by-name') ? undefined : previous.namedMemo.get('classes-by-name') as Map<string, ClassInfo[]> | undefined;
    if (classesByName && newClassInfos.length === 0) this.namedMemo.set('classes-by-name', classesByName);
    else if (classesByName) {
      const byName = new LayeredMap(classesByName);
      for (const info of newClassInfos) byName.set(info.name, byName.get(info.name)!.map((cls) => classFor.get(cls) ?? cls));
      this.namedMemo.set('classes-by-name', byName);
    }
    if (previous.namedMemo.has('callee-names') && calleeKeys(beforeChanged) === calleeKeys(nowChanged)) this.namedMemo.set('callee-names', previous.namedMemo.get('callee-names'));
    // The module's definitions, when the previous version built them and no changed statement binds a module name.
    const moduleTable = previous.definitionsByScope.get(previous.root.id);
    if (moduleTable && [...beforeChanged, ...nowChanged].every((statement) => this.moduleBindings(statement).length === 0)) {
      this.definitionsByScope.set(this.root.id, moduleTable);
    }
    // The words asked of the previous version: its counts, less the removed statements' (their answers were noted
    // while their text was current), plus the added ones'.
    for (const [word, count] of previous.spellingCounts) {
      let spelling = count;
      for (const statement of beforeChanged) if (spelledWhenCounted(statement, word)) spelling--;
      for (const statement of nowChanged) if (statementSpells(statement, word)) spelling++;
      this.spellingCounts.set(word, spelling);
    }
    // The file-wide signature reads imports, classes, roles and the functions' names (with their classes).
    const functionKeys = (infos: readonly FunctionInfo[]) => JSON.stringify(infos.map((info) => [info.name, info.classInfo?.name ?? '']));
    if (sameRoles && previous.namedMemo.has('globals-signature') &&
      functionKeys(previous.functions.slice(firstFunction, firstFunction + oldFunctions.size)) === functionKeys(newFunctionInfos)) {
      this.namedMemo.set('globals-signature', previous.namedMemo.get('globals-signature'));
    }
    return true;
  }

  // ---------------------------------------------------------------- structure

  private collectImport(node: Node): void {
    if (node.type === 'import_statement') {
      for (const child of children(node)) {
        if (child.type === 'dotted_name') {
          const head = child.text.split('.')[0]!;
          this.imports.set(head, head);
        } else if (child.type === 'aliased_import') {
          const name = child.childForFieldName('name')?.text;
          const alias = child.childForFieldName('alias')?.text;
          if (name && alias) this.imports.set(alias, name);
        }
      }
      return;
    }
    const moduleName = node.childForFieldName('module_name')?.text;
    if (!moduleName) return;
    for (const child of node.childrenForFieldName('name')) {
      if (!child) continue;
      if (child.type === 'dotted_name') this.imports.set(child.text, `${moduleName}.${child.text}`);
      else if (child.type === 'aliased_import') {
        const name = child.childForFieldName('name')?.text;
        const alias = child.childForFieldName('alias')?.text;
        if (name && alias) this.imports.set(alias, `${moduleName}.${name}`);
      }
    }
  }

  private collectClass(node: Node): void {
    const { name, bases, hasForward } = classSyntax(node);
    const baseNames = bases.map((base) => this.qualify(base) ?? base.text);
    const isLightning = baseNames.some((base) => /LightningModule$/.test(base));
    const isModule =
      isLightning || hasForward ||
      baseNames.some((base) => /(^|\.)(Module|PreTrainedModel|Sequential|ModuleList)$|Model$|Net$/.test(base));
    this.classes.push({ node, name, baseNames, isModule, isLightning });
  }

  /** A class of this file that derives from a LightningModule class of this file is one too. */
  private inheritLightning(): void {
    const byName = new Map(this.classes.map((cls) => [cls.name, cls] as const));
    for (let changed = true; changed;) {
      changed = false;
      for (const cls of this.classes) {
        if (cls.isLightning || !cls.baseNames.some((base) => byName.get(base)?.isLightning)) continue;
        cls.isLightning = true;
        cls.isModule = true;
        changed = true;
      }
    }
  }

  /**
   * Whether a class is known not to be a LightningModule: every base is torch's nn.Module family, `object`, or a class
   * of this file that is not one either. A base imported from elsewhere may be Lightning's.
   */
  private isKnownPlainClass(cls: ClassInfo, seen = new Set<number>()): boolean {
    if (cls.isLightning || seen.has(cls.node.id)) return false;
    seen.add(cls.node.id);
    return cls.baseNames.every((base) => {
      if (base === 'object' || /^torch\.nn\.(modules\.\w+\.)?[A-Z]\w*$/.test(base)) return true;
      const local = this.classNamed(base);
      return !!local && this.isKnownPlainClass(local, seen);
    });
  }

  private collectFunction(node: Node): void {
    const info = functionInfoOf(node);
    const name = info.name;
    this.functions.push(info);
    const list = this.functionsByName.get(name) ?? [];
    list.push(info);
    this.functionsByName.set(name, list);
  }

  private classOfMethod(fn: Node, classesById: ReadonlyMap<number, ClassInfo>): ClassInfo | undefined {
    let current = fn.parent;
    while (current && current.type !== 'class_definition' && current.type !== 'function_definition') current = current.parent;
    if (current?.type !== 'class_definition') return undefined;
    return classesById.get(current.id);
  }

  functionInfo(fn: Node): FunctionInfo | undefined {
    return this.functionAt(fn);
  }

  /** The FunctionInfo of a function_definition node, by binary search (functions are in document order). */
  private functionAt(fn: Node): FunctionInfo | undefined {
    const info = this.functions[lowerBoundBy(this.functions, fn.startIndex, (candidate) => candidate.node.startIndex)];
    return info?.node === fn ? info : undefined;
  }

  /** The classes defined within a node, in document order (by binary search: the classes are in document order). */
  classesWithin(node: Node): ClassInfo[] {
    const result: ClassInfo[] = [];
    for (let i = lowerBoundBy(this.classes, node.startIndex, (cls) => cls.node.startIndex); i < this.classes.length; i++) {
      const cls = this.classes[i]!;
      if (cls.node.startIndex >= node.endIndex) break;
      if (contains(node, cls.node)) result.push(cls);
    }
    return result;
  }

  /** The functions defined inside `node` (a top-level statement, say), in document order: one run of `functions`. */
  functionsWithin(node: Node): FunctionInfo[] {
    const result: FunctionInfo[] = [];
    for (let i = lowerBoundBy(this.functions, node.startIndex, (info) => info.node.startIndex); i < this.functions.length; i++) {
      const info = this.functions[i]!;
      if (info.node.startIndex >= node.endIndex) break;
      if (contains(node, info.node)) result.push(info);
    }
    return result;
  }

  /** The FunctionInfo of the function that holds `node`, or undefined at module level. */
  functionOf(node: Node): FunctionInfo | undefined {
    const fn = enclosingFunction(node);
    return fn.type === 'function_definition' ? this.functionAt(fn) : undefined;
  }

  /** Fully qualified name of an identifier/attribute chain, following imports (`nn.Linear` → `torch.nn.Linear`). */
  qualify(node: Node | null | undefined): string | undefined {
    const dotted = dottedName(node);
    if (!dotted) return undefined;
    // The head replaced by what it imports (asked of every callee by many rules: no split and join).
    const dot = dotted.indexOf('.');
    const resolved = this.imports.get(dot < 0 ? dotted : dotted.slice(0, dot));
    return resolved ? (dot < 0 ? resolved : resolved + dotted.slice(dot)) : dotted;
  }

  private qualifiedTail(node: Node | null | undefined): string | undefined {
    const qualified = this.qualify(node);
    return qualified?.slice(qualified.lastIndexOf('.') + 1);
  }

  /** Whether a callee resolves into torch (`torch.x`, `nn.x`, `F.x`, a name imported from torch). */
  private isTorchCallee(fn: Node | null | undefined): boolean {
    const qualified = this.qualify(fn);
    return !!qualified && /^torch(\.|$)/.test(qualified);
  }

  // ---------------------------------------------------------------- roles of names

  /** Learns which names hold models, losses, optimizers and scalers from what they are assigned. */
  private learnRolesFromAssignments(): void {
    const moduleClassNames = new Set(this.classes.filter((c) => c.isModule).map((c) => c.name));
    const classByName = new Map(this.classes.map((c) => [c.name, c] as const));
    // The assignments in document order, statement by statement (the whole-file list of assignments is made of the same lists).
    for (const statement of this.root.children) {
      for (const candidate of statementRoleCandidates(statement)) this.learnRole(candidate, moduleClassNames, classByName);
    }
  }

  private learnRole(candidate: RoleCandidate, moduleClassNames: Set<string>, classByName: Map<string, ClassInfo>): void {
    const { target, callee, receiver } = candidate;
    const head = callee.split('.', 1)[0]!;
    const resolved = this.imports.get(head);
    // The candidate is kept with its statement from version to version, and so is the kind of its callee while
    // the import its head names stays the same.
    let kind = candidate.kind && candidate.kind.resolved === resolved ? candidate.kind.kind : undefined;
    if (!kind) {
      kind = calleeKind(resolved ? resolved + callee.slice(head.length) : callee);
      candidate.kind = { resolved, kind };
    }
    const tail = kind.tail;
    if (
      moduleClassNames.has(tail) ||
      kind.model ||
      (receiver && kind.moduleMethod && this.isModelRef(receiver))
    ) {
      this.modelNames.add(target);
    } else if (kind.other === 'loss') {
      this.lossFunctionNames.add(target);
    } else if (kind.other === 'optimizer') {
      this.optimizerNames.add(target);
    } else if (kind.other === 'scaler') {
      this.scalerNames.add(target);
    }
    const cls = classByName.get(tail);
    if (cls) this.classInstances.set(target, cls);
  }

  /** Names bound by an assignment target: `x`, `self.x`, `(a, b)`. */
  targetNames(target: Node): string[] {
    if (target.type === 'identifier' || target.type === 'attribute') {
      const name = dottedName(target);
      return name ? [name] : [];
    }
    if (['pattern_list', 'tuple_pattern', 'list_pattern', 'tuple', 'list', 'expression_list'].includes(target.type)) {
      return children(target).flatMap((child) => this.targetNames(child));
    }
    return [];
  }

  /** Whether `node` names a model: learned from assignments, a module class instance, or by convention. */
  isModelRef(node: Node | null | undefined): boolean {
    if (!node) return false;
    if (node.type === 'identifier' && node.text === 'self') {
      return !!this.functionOf(node)?.classInfo?.isModule;
    }
    // `model.module` (DDP), `self.model`, `accelerator.unwrap_model(model)` all count.
    if (node.type === 'call') {
      const tail = calleeName(node);
      return tail === 'unwrap_model' || (tail === 'compile' && callArguments(node).positional.some((arg) => this.isModelRef(arg)));
    }
    const dotted = dottedName(node);
    if (!dotted) return false;
    if (this.modelNames.has(dotted)) return true;
    const last = dotted.slice(dotted.lastIndexOf('.') + 1);
    if (dotted.startsWith('self.') && this.modelNames.has(last)) return true;
    if (this.imports.has(dotted)) return false;
    if (last === 'module' && node.type === 'attribute') return this.isModelRef(node.childForFieldName('object'));
    return looksLikeModelName(last);
  }

  isLossFunctionRef(node: Node | null | undefined): boolean {
    if (!node) return false;
    const dotted = dottedName(node);
    if (!dotted) return false;
    // The answer depends on the name alone (the roles and imports are final once the model is built), and every
    // call of a training loop asks it of its callee: once per name.
    let answer = this.lossFunctionRefByName.get(dotted);
    if (answer === undefined) {
      const qualified = this.qualify(node) ?? dotted;
      const tail = qualified.slice(qualified.lastIndexOf('.') + 1);
      answer = this.lossFunctionNames.has(dotted) || (/^torch\./.test(qualified) && FUNCTIONAL_LOSSES.has(tail)) || looksLikeLossFunctionName(tail);
      this.lossFunctionRefByName.set(dotted, answer);
    }
    return answer;
  }

  isOptimizerRef(node: Node | null | undefined): boolean {
    if (!node) return false;
    const dotted = dottedName(node);
    if (!dotted) return false;
    const last = dotted.split('.').pop()!;
    if (this.optimizerNames.has(dotted) || this.optimizerNames.has(last)) return true;
    if (looksLikeSchedulerName(last)) return false;
    return looksLikeOptimizerName(last);
  }

  isScalerRef(node: Node | null | undefined): boolean {
    const dotted = dottedName(node);
    if (!dotted) return false;
    return this.scalerNames.has(dotted) || nameWords(dotted.split('.').pop()!).includes('scaler');
  }

  /** Whether a loop iterates over batches of data (a loader, an enumerate/tqdm of one, a batch iterator). */
  iteratesOverData(loop: Node): boolean {
    if (loop.type !== 'for_statement') return false;
    const iterable = loop.childForFieldName('right');
    return !!iterable && yieldsData(iterable);
  }

  // ---------------------------------------------------------------- no-grad contexts

  private isNoGradContextCall(call: Node): boolean | undefined {
    const tail = this.qualifiedTail(call.childForFieldName('function'));
    if (tail === 'no_grad' || tail === 'inference_mode') return true;
    if (tail === 'enable_grad') return false;
    if (tail === 'set_grad_enabled') {
      const arg = callArguments(call).positional[0];
      // Only a literal True turns gradients on for sure; `phase == 'train'` is off in evaluation.
      return arg?.type !== 'true';
    }
    return undefined;
  }

  private isNoGradDecorator(decorator: Node): boolean {
    const expression = children(decorator)[0];
    if (!expression) return false;
    const target = expression.type === 'call' ? expression.childForFieldName('function') : expression;
    const tail = this.qualifiedTail(target);
    return tail === 'no_grad' || tail === 'inference_mode';
  }

  /** Whether a function runs under no-grad for all its body: decorated, or a Lightning hook that does. */
  isNoGradFunction(info: FunctionInfo): boolean {
    const memo = this.noGradFunctionMemo.get(info.node.id);
    if (memo !== undefined) return memo;
    // Assumed false while callers are examined, so that recursion ends.
    this.noGradFunctionMemo.set(info.node.id, false);
    let result =
      info.decorators.some((decorator) => this.isNoGradDecorator(decorator)) ||
      // Lightning runs these hooks under no-grad; the same method names on a plain nn.Module are ordinary code.
      (!!info.classInfo && LIGHTNING_NO_GRAD_HOOKS.has(info.name) && !this.isKnownPlainClass(info.classInfo));
    if (!result) {
      // A helper that only no-grad code calls (Lightning's validation_step and test_step calling
      // self.evaluate(batch)) runs under no-grad too.
      const callers = this.callersOf(info);
      result = callers.length > 0 && callers.every((caller) => this.isNoGrad(caller));
    }
    this.noGradFunctionMemo.set(info.node.id, result);
    return result;
  }

  /** Whether `node` runs under a no-grad context (with-block, decorator, or `torch.set_grad_enabled(False)` earlier). */
  isNoGrad(node: Node): boolean {
    // Not kept per node: the with-statements are read per block (contextAround), and the function's answer is kept
    // per function, so a question costs a few steps up to the node's block, where an entry per node asked (two for
    // each line of a long loop) grew a table that every collection copied.
    return this.computeIsNoGrad(node);
  }

  private computeIsNoGrad(node: Node): boolean {
    const context = this.contextAround(node);
    if (typeof context === 'boolean') return context;
    if (context !== 'module') {
      const info = this.functionAt(context);
      if (info && this.isNoGradFunction(info)) return true;
    }
    // `torch.set_grad_enabled(False)` as a statement switches gradients off for the code after it.
    if (this.gradModeCalls.length === 0) return false;
    const scope = enclosingFunction(node);
    let state: boolean | undefined;
    for (const call of this.gradModeCalls) {
      if (call.startIndex >= node.startIndex) break;
      if (enclosingFunction(call).id !== scope.id) continue;
      state = this.isNoGradContextCall(call);
    }
    return state === true;
  }

  /**
   * What the with-statements around `node` say of gradients (the innermost that says anything), else the function
   * that holds it (or 'module'). Past the nearest block the answer is the block's for every node inside it (a with
   * item holds no block), so it is kept per block: each line of a long loop walked the same ancestors again.
   */
  private contextAround(node: Node): boolean | Node | 'module' {
    for (let current = node.parent; current; current = current.parent) {
      if (current.type === 'block') {
        const block = current;
        return this.memoFor('grad-context', block.id, () => this.contextAround(block));
      }
      if (current.type === 'with_statement') {
        const clause = current.children.find((child) => child.type === 'with_clause');
        for (const item of clause?.namedChildren ?? []) {
          if (item.type !== 'with_item' || contains(item, node)) continue;
          const value = item.childForFieldName('value');
          const call = value?.type === 'as_pattern' ? children(value)[0] : value;
          if (call?.type === 'call') {
            const context = this.isNoGradContextCall(call);
            if (context !== undefined) return context;
          }
        }
      }
      if (current.type === 'function_definition') return current;
    }
    return 'module';
  }

  // ---------------------------------------------------------------- definitions and dataflow

  /** The definitions of one scope (built on first use from the assignments and loops inside its range). */
  private definitions(scope: Node): Map<string, Definition[]> {
    let table = this.definitionsByScope.get(scope.id);
    if (table) return table;
    const built = new Map<string, Definition[]>();
    const add = (name: string, definition: Definition) => {
      const list = built.get(name) ?? [];
      list.push(definition);
      built.set(name, list);
    };
    const inScope = (node: Node) => enclosingFunction(node).id === scope.id;
    const within = (kind: NodeListKind): Node[] => this.nodesWithin(kind, scope).filter(inScope);
    if (scope.type === 'function_definition') {
      const parameters = scope.childForFieldName('parameters');
      for (const parameter of parameters ? children(parameters) : []) {
        const name = parameter.type === 'identifier' ? parameter.text : parameter.childForFieldName('name')?.text ?? children(parameter).find((c) => c.type === 'identifier')?.text;
        if (name) add(name, { site: parameter, kind: 'param' });
      }
    }
    if (scope === this.root) {
      // The module's bindings are kept per top-level statement: an edit does not walk every assignment of the file.
      for (const statement of this.root.children) for (const [name, definition] of this.moduleBindings(statement)) add(name, definition);
    } else {
      this.bindingsOf(within('assignments'), within('augmentedAssignments'), within('loops'), add);
    }
    for (const list of built.values()) list.sort((a, b) => a.site.startIndex - b.site.startIndex);
    table = built;
    this.definitionsByScope.set(scope.id, table);
    return table;
  }

  /** The bindings that assignments, augmented assignments and for loops make, in that order. */
  private bindingsOf(assignments: readonly Node[], augmentedAssignments: readonly Node[], loops: readonly Node[], add: (name: string, definition: Definition) => void): void {
    for (const assignment of assignments) {
      const left = assignment.childForFieldName('left');
      if (!left) continue;
      // `a = b = value` nests an assignment on the right.
      let value = assignment.childForFieldName('right');
      while (value?.type === 'assignment') value = value.childForFieldName('right');
      this.bindTarget(left, value ?? undefined, assignment, 'assign', add);
    }
    for (const augmented of augmentedAssignments) {
      const name = dottedName(augmented.childForFieldName('left'));
      if (name) add(name, { value: augmented, site: augmented, kind: 'augmented' });
    }
    for (const loop of loops) {
      const left = loop.type === 'for_statement' ? loop.childForFieldName('left') : null;
      if (left) this.bindTarget(left, undefined, loop, 'for', add);
    }
  }

  /** The module-scope bindings of one top-level statement (outside its functions), cached on the statement. */
  private moduleBindings(statement: Node): ReadonlyArray<readonly [string, Definition]> {
    let bindings = moduleBindingsCache.get(statement);
    if (!bindings) {
      const found: Array<readonly [string, Definition]> = [];
      const nodes = statementNodes(statement);
      // Outside every function of the statement (listed with its nodes): a range test, not a walk up to the module.
      const functions = nodes.structure.filter((node) => node.type === 'function_definition');
      const atModule = (list: readonly Node[]) => outsideAll(list, functions);
      this.bindingsOf(atModule(nodes.assignments), atModule(nodes.augmentedAssignments), atModule(nodes.loops), (name, definition) => found.push([name, definition]));
      bindings = found;
      moduleBindingsCache.set(statement, bindings);
    }
    return bindings;
  }

  private bindTarget(
    target: Node,
    value: Node | undefined,
    site: Node,
    kind: Definition['kind'],
    add: (name: string, definition: Definition) => void,
  ): void {
    if (target.type === 'identifier' || target.type === 'attribute') {
      const name = dottedName(target);
      if (name) add(name, { value, site, kind });
      return;
    }
    if (['pattern_list', 'tuple_pattern', 'list_pattern', 'tuple', 'list', 'expression_list'].includes(target.type)) {
      children(target).forEach((element, index) => {
        if (element.type === 'identifier' || element.type === 'attribute') {
          const name = dottedName(element);
          if (name) add(name, { value, index, site, kind });
        } else {
          this.bindTarget(element, undefined, site, kind, add);
        }
      });
    }
  }

  /** Every definition of `name` in one scope (a function definition or the module), in document order. */
  definitionsIn(scope: Node, name: string): readonly Definition[] {
    return this.definitions(scope).get(name) ?? [];
  }

  /** The names this file assigns an instance of a class of the file to (`trainer = Distiller(...)`). */
  instancesOf(cls: ClassInfo): string[] {
    return [...this.classInstances].filter(([, instance]) => instance.node.id === cls.node.id).map(([name]) => name);
  }

  /** The definitions of `name` that can reach `use`: the latest one before it, plus those later in an enclosing loop. */
  reachingDefinitions(name: string, use: Node): Definition[] {
    const scope = enclosingFunction(use);
    const all = this.definitions(scope).get(name) ?? [];
    const reaching: Definition[] = [];
    // The definitions are sorted by site: the latest one before the use is found from the use backwards (a site that
    // holds the use starts before it too), and the later ones are read up to the end of the outermost loop, so a
    // name defined and used on every line of a long loop is not scanned whole for each use.
    const afterUse = lowerBoundBy(all, use.startIndex + 1, (definition) => definition.site.startIndex);
    let latest: Definition | undefined;
    for (let i = afterUse - 1; i >= 0 && !latest; i--) {
      const definition = all[i]!;
      if (definition.site.startIndex < use.startIndex && !contains(definition.site, use)) latest = definition;
      else if (contains(definition.site, use) && definition.kind === 'for') latest = definition;
    }
    if (latest) reaching.push(latest);
    const loops = enclosingLoops(use);
    if (loops.length > 0) {
      const outer = loops[loops.length - 1]!;
      for (let i = afterUse; i < all.length && all[i]!.site.startIndex <= outer.endIndex; i++) {
        const definition = all[i]!;
        if (definition.site.startIndex > use.startIndex && contains(outer, definition.site) && definition !== latest) {
          reaching.push(definition);
        }
      }
    }
    return reaching;
  }

  /** Whether the value of `expression` may carry autograd history at that point of the program. */
  isAttached(expression: Node | null | undefined): boolean {
    if (!expression) return false;
    const memo = this.attachedMemo.get(expression.id);
    if (memo !== undefined) return memo;
    if (this.attachedInProgress.has(expression.id)) return false;
    this.attachedInProgress.add(expression.id);
    const result = !this.isNoGrad(expression) && this.computeAttached(expression);
    this.attachedInProgress.delete(expression.id);
    this.attachedMemo.set(expression.id, result);
    return result;
  }

  private computeAttached(node: Node): boolean {
    switch (node.type) {
      case 'identifier':
      case 'attribute': {
        if (node.type === 'attribute') {
          const attribute = node.childForFieldName('attribute')?.text ?? '';
          if (DETACHING_ATTRIBUTES.has(attribute)) return false;
        }
        const name = dottedName(node);
        if (name) {
          // Whatever the script backpropagates in this iteration carries a graph, however it was built.
          if (this.isBackpropagatedHere(name, node)) return true;
          const definitions = this.reachingDefinitions(name, node);
          if (definitions.length > 0) return definitions.some((definition) => this.isDefinitionAttached(definition));
        }
        // `outputs.loss`: an attribute of an attached value is attached.
        if (node.type === 'attribute') return this.isAttached(node.childForFieldName('object'));
        return false;
      }
      case 'call':
        return this.isCallAttached(node);
      case 'subscript': {
        const value = node.childForFieldName('value');
        if (value?.type === 'call' && VALUES_AND_INDICES.has(calleeName(value) ?? '')) {
          const index = node.childForFieldName('subscript');
          if (index?.type === 'integer' && index.text !== '0') return false;
        }
        // `losses["seg"]` where `losses` collects graph-attached values.
        return this.isAttached(value) || (!!value && this.holdsAttached(value));
      }
      case 'binary_operator': {
        return this.isAttached(node.childForFieldName('left')) || this.isAttached(node.childForFieldName('right'));
      }
      case 'unary_operator':
        return this.isAttached(node.childForFieldName('argument'));
      case 'parenthesized_expression':
      case 'list':
      case 'tuple':
      case 'expression_list':
      case 'list_splat':
      case 'await':
        return children(node).some((child) => this.isAttached(child));
      case 'conditional_expression':
        return children(node).slice(0, 1).concat(children(node).slice(2)).some((child) => this.isAttached(child));
      case 'boolean_operator':
        return this.isAttached(node.childForFieldName('left')) || this.isAttached(node.childForFieldName('right'));
      case 'named_expression':
        return this.isAttached(node.childForFieldName('value'));
      default:
        return false;
    }
  }

  private isDefinitionAttached(definition: Definition): boolean {
    if (definition.kind === 'param' || definition.kind === 'with' || definition.kind === 'import') return false;
    if (this.isNoGrad(definition.site)) return false;
    if (definition.kind === 'augmented') {
      const augmented = definition.site;
      return this.isAttached(augmented.childForFieldName('right'));
    }
    if (definition.kind === 'for') {
      const iterable = definition.site.childForFieldName('right');
      if (!iterable) return false;
      if (this.isAttached(iterable)) return true;
      // `for value in losses`, `for name, value in losses.items()`, `enumerate(losses)`: the elements of a
      // container of graph-attached values (the key or index of items()/enumerate() is not one).
      const container = elementSource(iterable);
      if (!container || !this.holdsAttached(container.node)) return false;
      return !(container.keyed && definition.index === 0);
    }
    const value = definition.value;
    if (!value) return false;
    if (definition.index !== undefined && definition.index > 0 && value.type === 'call' && VALUES_AND_INDICES.has(calleeName(value) ?? '')) {
      return false;
    }
    if (definition.index !== undefined && (value.type === 'tuple' || value.type === 'expression_list')) {
      return this.isAttached(children(value)[definition.index]);
    }
    // `loss, n_correct, n_word = cal_performance(...)`: a local function whose every return gives a number there.
    if (definition.index !== undefined && value.type === 'call') {
      const local = this.resolveLocalFunction(value);
      if (local && this.returnsNumberAt(local, definition.index)) return false;
    }
    return this.isAttached(value);
  }

  /**
   * Whether every `return a, b, c` of a local function gives a plain number at `index` (`x.item()`, an int, a
   * name only ever assigned such values there).
   */
  private returnsNumberAt(info: FunctionInfo, index: number): boolean {
    return this.memo(`returns-number:${info.node.id}:${index}`, () => {
      const returns = this.nodesWithin('returnStatements', info.node).filter((statement) => enclosingFunction(statement).id === info.node.id);
      if (returns.length === 0) return false;
      const isNumber = (expression: Node | undefined): boolean => {
        if (!expression) return false;
        if (isDetachedExpression(expression)) return true;
        if (expression.type !== 'identifier') return false;
        const definitions = this.reachingDefinitions(expression.text, expression);
        return definitions.length > 0 && definitions.every((definition) => {
          const source = definition.kind === 'augmented' ? definition.site.childForFieldName('right') : definition.value;
          return !!source && definition.index === undefined && isDetachedExpression(source);
        });
      };
      return returns.every((statement) => {
        const value = children(statement)[0];
        return (value?.type === 'tuple' || value?.type === 'expression_list') && isNumber(children(value)[index]);
      });
    });
  }

  private isCallAttached(call: Node): boolean {
    const fn = call.childForFieldName('function');
    if (!fn) return false;
    const args = callArguments(call);
    const anyArgAttached = () =>
      args.positional.some((arg) => this.isAttached(arg)) || [...args.keywords.values()].some((arg) => this.isAttached(arg));
    if (fn.type === 'attribute') {
      const method = fn.childForFieldName('attribute')?.text ?? '';
      const receiver = fn.childForFieldName('object');
      if (this.isTorchCallee(fn) && !this.isModelRef(receiver)) {
        // `nn.Sequential(...)`, `nn.Linear(...)`: constructing a module runs no forward.
        if (DETACHING_TORCH_FUNCTIONS.has(method) || /^[A-Z]/.test(method)) return false;
        return anyArgAttached();
      }
      if (method === 'forward' && this.isModelRef(receiver)) return true;
      if (method === 'generate' || method === 'parameters' || method === 'state_dict' || method === 'named_parameters') return false;
      if (DETACHING_METHODS.has(method)) return false;
      if (receiver && this.isAttached(receiver)) return true;
      if (this.isLossFunctionRef(fn)) return anyArgAttached();
      const local = this.resolveLocalFunction(call);
      if (local) return this.returnsAttached(local) || (anyArgAttached() && this.returnsFromParameters(local));
      // `self.model(x)` in a trainer class, `model.encoder(x)`: a forward of a model held in an attribute.
      return this.isDirectForwardCall(call);
    }
    if (fn.type === 'identifier') {
      const name = fn.text;
      if (DETACHING_FUNCTIONS.has(name)) return false;
      // `Net()`, `TransformerBlock(args)`, `GPT2LMHeadModel(config)` construct a module; they run no forward.
      if (this.isClassName(name)) return false;
      if (name === 'sum' || name === 'max' || name === 'min' || name === 'abs') return anyArgAttached();
      if (this.isTorchCallee(fn)) {
        const tail = this.qualifiedTail(fn) ?? name;
        if (DETACHING_TORCH_FUNCTIONS.has(tail)) return false;
        if (/^torch\.nn\.[A-Z]/.test(this.qualify(fn) ?? '')) return false;
        return anyArgAttached();
      }
      // A function of this file says for itself what it returns (`optimize_model()` may return loss.item()).
      const local = this.resolveLocalFunction(call);
      if (local) return this.returnsAttached(local) || (anyArgAttached() && this.returnsFromParameters(local));
      if (this.isModelRef(fn)) return true;
      if (this.isLossFunctionRef(fn)) return anyArgAttached();
      return false;
    }
    if (fn.type === 'call' || fn.type === 'subscript') {
      // `model.module(x)` is handled above; `models[i](x)` and `make_model()(x)` are forwards of a model.
      return this.isModelRef(fn.type === 'subscript' ? fn.childForFieldName('value') : fn);
    }
    return false;
  }

  /** Names that a function calls backward on: `x.backward()`, `scaler.scale(x).backward()`, `accelerator.backward(x)`. */
  /**
   * The innermost loop (or function) of each backward call, by the name it backpropagates: `x.backward()`,
   * `scaler.scale(x).backward()`, `accelerator.backward(x)`, `torch.autograd.backward(x)`.
   */
  private backpropagatedNames(scope: Node): Map<string, number[]> {
    let names = this.backpropagatedMemo.get(scope.id);
    if (names) return names;
    names = new Map();
    for (const call of this.callsWithin(scope)) {
      if (!this.isBackwardCall(call)) continue;
      let subject = this.backwardSubject(call);
      // `scaler.scale(loss).backward()` and `(loss / n).backward()`
      while (subject && (subject.type === 'call' || subject.type === 'parenthesized_expression' || subject.type === 'binary_operator')) {
        subject = subject.type === 'call' ? callArguments(subject).positional[0] : subject.type === 'binary_operator' ? subject.childForFieldName('left') ?? undefined : children(subject)[0];
      }
      const name = dottedName(subject);
      if (!name) continue;
      const region = innermostLoop(call) ?? scope;
      names.set(name, [...(names.get(name) ?? []), region.id]);
    }
    this.backpropagatedMemo.set(scope.id, names);
    return names;
  }

  /**
   * The expression a backward call differentiates: `loss` in `loss.backward()`, `accelerator.backward(loss)`,
   * `torch.autograd.backward(loss)` and `torch.autograd.grad(loss, x)`; `loss / n` in `(loss / n).backward()`;
   * `loss` in `scaler.scale(loss).backward()`.
   */
  backwardSubject(call: Node): Node | undefined {
    const receiver = callReceiver(call);
    const { positional, keywords } = callArguments(call);
    // A backward method of a helper object (accelerator, fabric, the Lightning module, torch.autograd)
    // takes the loss as its argument; a tensor's own backward() is called on it.
    const helper = !receiver || calleeName(call) === 'manual_backward' || this.isTorchCallee(call.childForFieldName('function')) ||
      nameWords(dottedName(receiver) ?? '').some((word) => ['accelerator', 'fabric', 'engine', 'self', 'trainer', 'deepspeed', 'model'].includes(word));
    let subject = helper ? positional[0] ?? keywords.get('tensors') ?? keywords.get('outputs') ?? keywords.get('loss') : receiver;
    while (subject?.type === 'call' && calleeName(subject) === 'scale') subject = callArguments(subject).positional[0];
    while (subject?.type === 'parenthesized_expression') subject = subject.namedChildren[0] ?? undefined;
    return subject;
  }

  /** `torch.autograd.grad(outputs, inputs, ...)` through any alias (`from torch.autograd import grad`). */
  isAutogradGradCall(call: Node): boolean {
    return calleeName(call) === 'grad' && /^torch\.autograd\.grad$/.test(this.qualify(call.childForFieldName('function')) ?? '');
  }

  /** Whether `name` at `node` is backpropagated in the same iteration (same innermost loop) or function. */
  private isBackpropagatedHere(name: string, node: Node): boolean {
    const scope = enclosingFunction(node);
    const regions = this.backpropagatedNames(scope).get(name);
    if (!regions) return false;
    const here = innermostLoop(node) ?? scope;
    return regions.includes(here.id);
  }

  /** A class of this file, or an imported name written like a class (`GPT2LMHeadModel`), not a model variable. */
  isClassName(name: string): boolean {
    if (this.classNamed(name)) return true;
    return this.imports.has(name) && /^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$/.test(name) && !this.modelNames.has(name);
  }

  /**
   * Whether a container (a list or dict named by `node`) holds graph-attached values in its function: built by a
   * comprehension or literal of such values, or filled by `c[k] = v`, `c.append(v)`, `c.extend(...)`.
   */
  holdsAttached(node: Node): boolean {
    const name = dottedName(node);
    if (!name) return false;
    const scope = enclosingFunction(node);
    return this.memo(`holds-attached:${scope.id}:${name}`, () => {
      for (const definition of this.definitions(scope).get(name) ?? []) {
        const value = definition.value;
        if (!value || this.isNoGrad(definition.site)) continue;
        if (['list_comprehension', 'dictionary_comprehension', 'generator_expression', 'set_comprehension'].includes(value.type)) {
          const body = value.childForFieldName('body');
          const element = body?.type === 'pair' ? body.childForFieldName('value') : body;
          if (element && this.isAttached(element)) return true;
        } else if (value.type === 'dictionary') {
          if (children(value).some((pair) => pair.type === 'pair' && this.isAttached(pair.childForFieldName('value')))) return true;
        } else if (value.type === 'list' || value.type === 'tuple') {
          if (children(value).some((element) => this.isAttached(element))) return true;
        }
      }
      for (const assignment of this.nodesWithin('assignments', scope)) {
        const left = assignment.childForFieldName('left');
        if (left?.type !== 'subscript' || dottedName(left.childForFieldName('value')) !== name) continue;
        if (this.isAttached(assignment.childForFieldName('right'))) return true;
      }
      for (const method of ['append', 'extend', 'insert']) {
        for (const call of this.callsNamed(method)) {
          if (!contains(scope, call) || dottedName(callReceiver(call)) !== name) continue;
          const { positional } = callArguments(call);
          if (this.isAttached(method === 'insert' ? positional[1] : positional[0])) return true;
        }
      }
      return false;
    });
  }

  /** Whether a local function may return a graph-attached value. */
  returnsAttached(info: FunctionInfo): boolean {
    return this.memoFor('returns-attached', info.node.id, () => this.functionReturnsAttached(info));
  }

  /**
   * The file-wide facts every rule may read whatever statement it looks at: imports, classes, the roles names
   * were given by assignments, functions by name, module-level names. Incremental analysis compares it.
   */
  globalsSignature(): string {
    return this.memo('globals-signature', () => JSON.stringify([
      [...this.imports].sort(),
      this.classes.map((c) => [c.name, c.isModule, c.isLightning]),
      [...this.modelNames].sort(), [...this.lossFunctionNames].sort(), [...this.optimizerNames].sort(), [...this.scalerNames].sort(),
      [...this.classInstances].map(([name, cls]) => [name, cls.name]).sort(),
      this.functions.map((f) => [f.name, f.classInfo?.name ?? '']),
    ]));
  }

  /**
   * Whether a local function returns something computed from its parameters (a loss helper such as
   * `kd_loss(student_logits, teacher_logits, T)`), not turned into a number: given graph-attached arguments,
   * its result carries their graph.
   */
  returnsFromParameters(info: FunctionInfo): boolean {
    return this.memoFor('returns-from-parameters', info.node.id, () => {
      if (this.isNoGradFunction(info)) return false;
      const parameters = new Set(
        (info.node.childForFieldName('parameters')?.descendantsOfType('identifier') ?? []).map((identifier) => identifier.text).filter((name) => name !== 'self'),
      );
      // Follows local assignments back a few steps: `d = cdist(emb, emb); hardest = d.max(1).values; return f(hardest)`.
      const seen = new Set<number>();
      const dependsOnParameters = (expression: Node, depth: number): boolean => {
        if (seen.has(expression.id)) return false;
        seen.add(expression.id);
        const names = expression.type === 'identifier' ? [expression] : expression.descendantsOfType('identifier');
        for (const identifier of names) {
          if (parameters.has(identifier.text)) return true;
          if (depth === 0) continue;
          for (const definition of this.reachingDefinitions(identifier.text, identifier)) {
            // `correct += (...).item()` accumulates numbers: whatever it read, it holds no graph.
            const source = definition.kind === 'augmented' ? definition.site.childForFieldName('right') : definition.value;
            if (!source || isDetachedExpression(source)) continue;
            if (dependsOnParameters(source, depth - 1)) return true;
          }
        }
        return false;
      };
      for (const statement of this.nodesWithin('returnStatements', info.node)) {
        if (enclosingFunction(statement).id !== info.node.id) continue;
        const value = children(statement)[0];
        if (value && !isDetachedExpression(value) && dependsOnParameters(value, 4)) return true;
      }
      return false;
    });
  }

  private functionReturnsAttached(info: FunctionInfo): boolean {
    if (this.isNoGradFunction(info)) return false;
    for (const statement of this.nodesWithin('returnStatements', info.node)) {
      if (enclosingFunction(statement).id !== info.node.id) continue;
      const value = children(statement)[0];
      if (value && this.isAttached(value)) return true;
    }
    return false;
  }

  // ---------------------------------------------------------------- calls of interest

  /** Functions of this file that a call may run: `foo()`, `self.foo()`, `obj.foo()` on an instance of a local class. */
  resolveLocalFunction(call: Node): FunctionInfo | undefined {
    // Most calls name no function of this file (`xs.append`, `torch.zeros`): answered before their callee's shape
    // is made, which every function, `self.` method and instance method is looked up by the name of.
    const name = calleeName(call);
    return name === undefined ? undefined : this.resolveCallNamed(call, name);
  }

  /** resolveLocalFunction of a call whose callee's last name is known (callersOf's calls, found by it). */
  private resolveCallNamed(call: Node, name: string): FunctionInfo | undefined {
    if (!this.functionsByName.has(name)) return undefined;
    const callee = calleeShape(call);
    switch (callee.kind) {
      case 'function':
        return this.functionsByName.get(callee.name)?.find((info) => !info.classInfo);
      case 'self': {
        const cls = callee.owner ? this.functionAt(callee.owner)?.classInfo : undefined;
        return cls ? this.methodOfClass(callee.method, cls) : undefined;
      }
      case 'instance': {
        const instanceOf = this.classInstances.get(callee.receiver);
        return instanceOf ? this.methodOfClass(callee.method, instanceOf) : undefined;
      }
      default:
        return undefined;
    }
  }

  /**
   * The first method named `name` of a class. Per name, the methods are indexed by class once: a long script has
   * hundreds of classes with a `forward`, and resolving each `self.forward(…)` by a scan of them all was quadratic.
   */
  private methodOfClass(name: string, cls: ClassInfo): FunctionInfo | undefined {
    let byClass = this.methodsByClass.get(name);
    if (!byClass) {
      byClass = new Map();
      for (const info of this.functionsByName.get(name) ?? []) {
        if (info.classInfo && !byClass.has(info.classInfo.node.id)) byClass.set(info.classInfo.node.id, info);
      }
      this.methodsByClass.set(name, byClass);
    }
    return byClass.get(cls.node.id);
  }

  /** Calls inside `node` that belong to the same function (calls in nested defs are excluded). */
  callsWithin(node: Node): Node[] {
    return this.memoFor('calls-within', node.id, () => {
      // The module: each top-level statement's module-level calls, kept per statement (a statement moved unchanged
      // into the next version keeps them), where a walk up from every call of the file cost each version milliseconds.
      if (node === this.root) return this.root.children.flatMap(moduleLevelCalls);
      const owner = node.type === 'function_definition' ? node : enclosingFunction(node);
      return this.nodesWithin('calls', node).filter((call) => enclosingFunction(call).id === owner.id);
    });
  }

  isBackwardCall(call: Node): boolean {
    const name = calleeName(call);
    if (name === 'backward') {
      const fn = call.childForFieldName('function');
      // `torch.autograd.backward(loss)` and `loss.backward()` both count.
      return fn?.type === 'attribute';
    }
    return name === 'manual_backward';
  }

  isRetainGraphBackward(call: Node): boolean {
    if (calleeName(call) !== 'backward') return false;
    const retain = callArguments(call).keywords.get('retain_graph');
    return retain?.type === 'true';
  }

  /** `opt.step()` on an optimizer, or `scaler.step(opt)`; scheduler steps are not optimizer steps. */
  isOptimizerStep(call: Node): boolean {
    if (calleeName(call) !== 'step') return false;
    const receiver = callReceiver(call);
    if (!receiver) return false;
    if (this.isScalerRef(receiver)) return true;
    return this.isOptimizerRef(receiver);
  }

  /** Clears gradients: `x.zero_grad(...)`, `p.grad = None`, `p.grad.zero_()`, `p.grad.detach_()`. */
  isGradClearCall(call: Node): boolean {
    const name = calleeName(call);
    if (name === 'zero_grad' || name === 'clear_grad' || name === 'zero_grads') return true;
    if (name === 'zero_' || name === 'fill_') {
      const receiver = callReceiver(call);
      return receiver?.type === 'attribute' && receiver.childForFieldName('attribute')?.text === 'grad';
    }
    return false;
  }

  private isGradClearAssignment(assignment: Node): boolean {
    const left = assignment.childForFieldName('left');
    const right = assignment.childForFieldName('right');
    return left?.type === 'attribute' && left.childForFieldName('attribute')?.text === 'grad' && right?.type === 'none';
  }

  /** A forward pass of a model (also `self(x)` in a module and `model.forward(x)`). */
  isDirectForwardCall(call: Node): boolean {
    // Asked of the same call by the function summaries, the training-loop forwards and several rules.
    return this.memoFor('direct-forward', call.id, () => this.computeIsDirectForwardCall(call));
  }

  private computeIsDirectForwardCall(call: Node): boolean {
    const fn = call.childForFieldName('function');
    if (!fn) return false;
    if (fn.type === 'attribute') {
      const object = fn.childForFieldName('object');
      const method = fn.childForFieldName('attribute')?.text;
      if (method === 'forward' || method === 'module') return this.isModelRef(object);
      // `accelerator.unwrap_model(vae)`, `self.get_model()`: a method that hands a model over runs no forward.
      if (method && looksLikeModelAccessor(method)) return false;
      // `gail.Discriminator(...)`, `models.ResNet(...)`: a class of another module is constructed, not run.
      if (method && /^[A-Z]/.test(method)) return false;
      // A computing method of a class this file does not define: its own file decides (no_grad, numbers).
      if (method && looksLikeComputationMethod(method) && !this.functionsByName.has(method)) return false;
      // Most calls of a loop are not on a model: that answer first.
      if (!this.isModelRef(fn) || this.isTorchCallee(fn) || this.isLossFunctionRef(fn)) return false;
      if (object?.type === 'identifier' && object.text === 'self') return this.isSelfSubmoduleForward(fn);
      // `model.encoder(x)` runs a submodule.
      return true;
    }
    if (fn.type === 'identifier') {
      if (!this.isModelRef(fn) || this.isTorchCallee(fn) || this.isLossFunctionRef(fn) || looksLikeModelAccessor(fn.text)) return false;
      return !this.functionsByName.has(fn.text) && !this.classNamed(fn.text);
    }
    if (fn.type === 'subscript') return this.isModelRef(fn.childForFieldName('value'));
    return false;
  }

  /** `self.model(x)` inside a class is a forward; `self.encoder_name(x)` that is a method of the class is not. */
  private isSelfSubmoduleForward(fn: Node): boolean {
    const name = fn.childForFieldName('attribute')?.text ?? '';
    const cls = this.functionOf(fn)?.classInfo;
    const isMethod = (this.functionsByName.get(name) ?? []).some((info) => info.classInfo?.node.id === cls?.node.id);
    return !isMethod;
  }

  /** What a function does when it runs, following calls to functions of the same file (memoised, cycle-safe). */
  summary(info: FunctionInfo): FunctionSummary {
    const memo = this.summaryMemo.get(info.node.id);
    if (memo) return memo;
    const summary: FunctionSummary = { backward: false, step: false, clear: false, forward: false };
    this.summaryMemo.set(info.node.id, summary);
    const noGrad = this.isNoGradFunction(info);
    for (const call of this.callsWithin(info.node)) {
      if (this.isBackwardCall(call)) summary.backward = true;
      if (this.isOptimizerStep(call)) summary.step = true;
      if (this.isGradClearCall(call)) summary.clear = true;
      if (!noGrad && this.isDirectForwardCall(call) && !this.isNoGrad(call)) summary.forward = true;
      const callee = this.resolveLocalFunction(call);
      if (callee && callee.node.id !== info.node.id) {
        const inner = this.summary(callee);
        summary.backward ||= inner.backward;
        summary.step ||= inner.step;
        summary.clear ||= inner.clear;
        summary.forward ||= inner.forward && !this.isNoGrad(call) && !noGrad;
      }
    }
    if (!summary.clear) summary.clear = this.assignmentsWithin(info.node).some((a) => this.isGradClearAssignment(a));
    return summary;
  }

  private assignmentsWithin(node: Node): Node[] {
    return this.nodesWithin('assignments', node);
  }

  /**
   * Calls whose callee's last name is `name` (`x.append(...)`, `append(...)`), in document order. Built from
   * per-statement indexes, so statements moved unchanged into this version are not indexed again; all names at
   * once, since a file's functions are each looked up by name (one pass per name would be quadratic).
   */
  callsNamed(name: string): readonly Node[] {
    return this.statementIndex('calls-by-callee', (_, statement) => calleeIndex(statement), nodeStart).get(name) ?? NO_CALLS;
  }

  private readonly statementIndexes = new Map<string, StatementIndex<unknown>>();

  /**
   * Entries by name gathered from every top-level statement, each name's in document order. `ofStatement` reads
   * one statement alone and caches its answer on it (a removed statement's nodes read the next version's text);
   * `position` places an entry in the file. Built once, then carried from version to version by deriveFrom, which
   * replaces the changed statements' entries and shares every other name's list.
   */
  statementIndex<T>(key: string, ofStatement: (model: SemanticModel, statement: Node) => ReadonlyMap<string, readonly T[]>, position: (entry: T) => number): ReadonlyMap<string, readonly T[]> {
    let index = this.statementIndexes.get(key) as StatementIndex<T> | undefined;
    if (!index) {
      const byName = new Map<string, T[]>();
      // forEach, not for…of: a document's first analysis runs this before V8 optimises it, and each step of a Map's
      // iterator then allocates (a 20,000-line script: 4 MiB of the open's 80, collected by young collections).
      const add = (found: readonly T[], name: string) => {
        const list = byName.get(name);
        if (list) for (const entry of found) list.push(entry);
        else byName.set(name, found.slice());
      };
      for (const statement of this.root.children) ofStatement(this, statement).forEach(add);
      index = { ofStatement, position, byName };
      this.statementIndexes.set(key, index as StatementIndex<unknown>);
    }
    return index.byName;
  }

  /** The calls of one top-level statement by callee name (its index, cached on the statement). */
  statementCallsByCallee(statement: Node): ReadonlyMap<string, readonly Node[]> {
    return calleeIndex(statement);
  }

  /** Every callee name the file calls (`append`, `DataLoader`, `AdamW`), from the per-statement indexes (memoised). */
  calleeNames(): ReadonlySet<string> {
    return this.memo('callee-names', () => {
      const names = new Set<string>();
      const add = (_: unknown, name: string) => names.add(name);
      for (const statement of this.root.children) calleeIndex(statement).forEach(add);
      return names;
    });
  }

  /** Whether code inside `node` (a loop or block) clears gradients, directly or through a local function. */
  clearsGradients(node: Node): boolean {
    return this.memoFor('clears-gradients', node.id, () => this.computeClearsGradients(node));
  }

  private computeClearsGradients(node: Node): boolean {
    for (const call of this.nodesWithin('calls', node)) {
      if (this.isGradClearCall(call)) return true;
      const callee = this.resolveLocalFunction(call);
      if (callee && this.summary(callee).clear) return true;
    }
    return this.assignmentsWithin(node).some((assignment) => this.isGradClearAssignment(assignment));
  }

  /** Whether code inside `node` runs a backward pass, directly or through a local function. */
  runsBackward(node: Node): boolean {
    return this.memoFor('runs-backward', node.id, () => this.computeRunsBackward(node));
  }

  private computeRunsBackward(node: Node): boolean {
    for (const call of this.callsWithin(node)) {
      if (this.isBackwardCall(call)) return true;
      const callee = this.resolveLocalFunction(call);
      if (callee && this.summary(callee).backward) return true;
    }
    return false;
  }

  /** Whether code inside `node` steps an optimizer, directly or through a local function. */
  stepsOptimizer(node: Node): boolean {
    return this.memoFor('steps-optimizer', node.id, () => this.computeStepsOptimizer(node));
  }

  private computeStepsOptimizer(node: Node): boolean {
    for (const call of this.callsWithin(node)) {
      if (this.isOptimizerStep(call)) return true;
      const callee = this.resolveLocalFunction(call);
      if (callee && this.summary(callee).step) return true;
    }
    return false;
  }

  /** A loop that processes batches: it iterates over data, or it trains (backward / optimizer step). */
  isBatchLoop(loop: Node): boolean {
    return this.memoFor('batch-loop', loop.id, () => this.computeIsBatchLoop(loop));
  }

  private computeIsBatchLoop(loop: Node): boolean {
    return this.iteratesOverData(loop) || this.runsBackward(loop) || this.stepsOptimizer(loop);
  }

  /**
   * A loop that runs once per batch: it iterates over data, or a backward / optimizer step has it as its
   * innermost loop (an epoch loop around a batch loop is not one).
   */
  isPerBatchLoop(loop: Node): boolean {
    return this.memoFor('per-batch', loop.id, () => {
      if (this.iteratesOverData(loop)) return true;
      for (const call of this.callsWithin(loop)) {
        if (innermostLoop(call)?.id !== loop.id) continue;
        if (this.isBackwardCall(call) || this.isOptimizerStep(call)) return true;
        // A per-step helper (`train_step(x, y)`, `train_step(batch)`) makes the loop per-batch; one handed a whole
        // loader (`train_epoch(loader)`), or one that loops itself, does not.
        const callee = this.resolveLocalFunction(call);
        const args = [...callArguments(call).positional, ...callArguments(call).keywords.values()];
        const takesLoader = args.some((arg) => this.isWholeLoaderArgument(arg));
        if (callee && !takesLoader && (this.summary(callee).backward || this.summary(callee).step) && !this.loopsInside(callee)) {
          return true;
        }
      }
      return false;
    });
  }

  /**
   * Whether code in `region` trains or evaluates: a loop over batches (or one that runs backward or an optimizer step),
   * a loop that runs a model, or a trainer (`Trainer(...)`, `pl.Trainer(...)`, `SFTTrainer(...)`).
   */
  trainsOrEvaluatesWithin(region: Node): boolean {
    return this.memoFor('trains-or-evaluates', region.id, () => {
      for (const loop of this.nodesWithin('loops', region)) {
        if (this.isBatchLoop(loop) || this.callsWithin(loop).some((call) => this.isDirectForwardCall(call))) return true;
      }
      for (const call of this.nodesWithin('calls', region)) if (/^([A-Z]\w*)?Trainer$/.test(calleeName(call) ?? '')) return true;
      return false;
    });
  }

  /**
   * Whether a call argument is a whole loader rather than one batch: a data-like name (`loader`, `train_ds`,
   * `batches`) that is not a single batch (`batch`, `sample`, `mb`) and was not taken from `next(...)`.
   */
  private isWholeLoaderArgument(arg: Node): boolean {
    const name = dottedName(arg);
    if (!name || !looksLikeDataName(name)) return false;
    const words = nameWords(name.split('.').pop()!);
    if (words.some((word) => word === 'batch' || word === 'minibatch' || word === 'sample' || word === 'mb')) return false;
    if (arg.type === 'identifier') {
      const fromNext = this.reachingDefinitions(name, arg).some((definition) => definition.value?.type === 'call' && calleeName(definition.value) === 'next');
      if (fromNext) return false;
    }
    return true;
  }

  /** Whether a local function loops, directly or through the local functions it calls (memoised, cycle-safe). */
  private loopsInside(info: FunctionInfo, seen = new Set<number>()): boolean {
    if (seen.has(info.node.id)) return false;
    seen.add(info.node.id);
    if (this.nodesWithin('loops', info.node).some((inner) => contains(info.node, inner))) return true;
    return this.callsWithin(info.node).some((call) => {
      const callee = this.resolveLocalFunction(call);
      return !!callee && this.loopsInside(callee, seen);
    });
  }

  /**
   * The previous version's callers of the functions named `name` (callersOf's groups), brought to this version when
   * only some top-level statements changed and the roles of names did not: the changed statements' calls by that name
   * out, their new ones resolved, and the calls elsewhere that resolved to a method of a changed class resolved again
   * (the class is a new object). A call elsewhere resolves as before otherwise: by `self.` to a method of its own,
   * unchanged class, by name to the first function of that name outside classes, by an instance to a method of the
   * instance's class. Undefined (all calls by the name resolved again when asked) where the changed statements
   * define a function of that name outside a class (which function a call by name reaches may change), or a changed
   * class gains a method of that name (calls elsewhere on its instances may reach it now).
   */
  private patchedCallers(name: string, callers: ReadonlyMap<number, readonly Node[]>, change: CallersChange): ReadonlyMap<number, readonly Node[]> | undefined {
    const named = (infos: readonly FunctionInfo[]) => infos.filter((info) => info.name === name);
    const oldNamed = named(change.oldFunctions);
    const newNamed = named(change.newFunctions);
    if ([...oldNamed, ...newNamed].some((info) => !info.classInfo)) return undefined;
    const definesMethod = (infos: readonly FunctionInfo[], cls: Node) => infos.some((info) => info.classInfo?.node === cls);
    if (change.classPairs.some(([before, now]) => definesMethod(newNamed, now) && !definesMethod(oldNamed, before))) return undefined;
    const oldIds = new Set(oldNamed.map((info) => info.node.id));
    const callsIn = (statements: readonly Node[]) => statements.flatMap((statement) => calleeIndex(statement).get(name) ?? []);
    const removedCalls = new Set(callsIn(change.beforeChanged));
    const again = callsIn(change.nowChanged);
    const patched = new Map<number, readonly Node[]>();
    callers.forEach((calls, id) => {
      const kept = removedCalls.size > 0 ? calls.filter((call) => !removedCalls.has(call)) : calls;
      if (oldIds.has(id)) again.push(...kept);
      else if (kept.length > 0) patched.set(id, kept.length === calls.length ? calls : kept);
    });
    // The lists that gain calls are new (the previous version's are shared) and in document order, as callersOf makes them.
    const grown = new Map<number, Node[]>();
    for (const call of again) {
      const id = this.resolveCallNamed(call, name)?.node.id;
      if (id === undefined) continue;
      let list = grown.get(id);
      if (!list) grown.set(id, (list = [...(patched.get(id) ?? [])]));
      list.push(call);
    }
    grown.forEach((list, id) => patched.set(id, list.sort((a, b) => a.startIndex - b.startIndex)));
    return patched;
  }

  /** The calls of a local function from elsewhere in the file (memoised). */
  callersOf(info: FunctionInfo): readonly Node[] {
    const memo = this.callersMemo.get(info.node.id);
    if (memo) return memo;
    // Only calls by the function's own name can reach it (`f(...)`, `self.f(...)`, `obj.f(...)`). The calls of a
    // name are resolved once for every function of that name: a script has hundreds of `__init__`s.
    let byCallee = this.callersByName.get(info.name);
    if (!byCallee) {
      const resolved = new Map<number, Node[]>();
      for (const call of this.callsNamed(info.name)) {
        const id = this.resolveCallNamed(call, info.name)?.node.id;
        if (id === undefined) continue;
        const calls = resolved.get(id);
        if (calls) calls.push(call);
        else resolved.set(id, [call]);
      }
      this.callersByName.set(info.name, (byCallee = resolved));
    }
    const callers = byCallee.get(info.node.id) ?? [];
    this.callersMemo.set(info.node.id, callers);
    return callers;
  }

  /**
   * The matches of a rule's query (server/src/rules/queries/<name>.scm), as captures on this model's nodes,
   * within the given top-level statements (incremental analysis) or the whole file.
   */
  queryMatches(name: string, region?: readonly Node[]): QueryCaptures[] {
    return region ? region.flatMap((statement) => queryMatches(this.sourceTree, this.root, name, statement)) : queryMatches(this.sourceTree, this.root, name);
  }

  /** Per word asked of spells(): how many top-level statements spell it (carried on by deriveFrom). */
  private readonly spellingCounts = new Map<string, number>();

  /**
   * Whether the file's text contains `word` (outside its top-level statements and comments a file holds only blank
   * space): a derived model counts only its changed statements, where a scan of the text costs a long file
   * milliseconds per word and edit.
   */
  spells(word: string): boolean {
    let count = this.spellingCounts.get(word);
    if (count === undefined) {
      // One scan of the whole text, where it is one string; else statement by statement (not making it whole).
      const content = this.root.content;
      count = content.isWhole ? countStatementsSpelling(this.root.children, content.text, word) : this.root.children.filter((statement) => statementSpells(statement, word)).length;
      this.spellingCounts.set(word, count);
    }
    return count > 0;
  }

  private readonly namedMemo = new Map<string, unknown>();

  /** Caches a file-wide answer under a key for the life of this model (one document version). */
  memo<T>(key: string, compute: () => T): T {
    // One lookup: undefined results are stored as a marker.
    const cached = this.namedMemo.get(key);
    if (cached !== undefined) return (cached === MEMO_UNDEFINED ? undefined : cached) as T;
    const value = compute();
    this.namedMemo.set(key, value === undefined ? MEMO_UNDEFINED : value);
    return value;
  }

  private readonly idMemo = new Map<string, Map<number, unknown>>();

  /**
   * Caches an answer about one node (or function, scope...) under a kind and its numeric id: asked per call or per
   * finding, so the lookup is a number in a map of its kind, with no key string built each time.
   */
  memoFor<T>(kind: string, id: number, compute: () => T): T {
    let answers = this.idMemo.get(kind);
    if (!answers) this.idMemo.set(kind, (answers = new Map()));
    const cached = answers.get(id);
    if (cached !== undefined) return (cached === MEMO_UNDEFINED ? undefined : cached) as T;
    const value = compute();
    answers.set(id, value === undefined ? MEMO_UNDEFINED : value);
    return value;
  }

  /** The assignments whose target is spelled `name` (`x`, `self.x`, `cfg.lr`), in document order (indexed per statement). */
  assignmentsTo(name: string): readonly Node[] {
    return this.statementIndex('assignments-by-target', (_, statement) => statementTargets(statement).assignments, nodeStart).get(name) ?? NO_CALLS;
  }

  /** The augmented assignments whose target is spelled `name` (`total += x`), in document order (indexed per statement). */
  augmentedAssignmentsTo(name: string): readonly Node[] {
    return this.statementIndex('augmented-assignments-by-target', (_, statement) => statementTargets(statement).augmentedAssignments, nodeStart).get(name) ?? NO_CALLS;
  }

  /** The classes of this file with that name, in document order, by a name index built on first use. */
  classesNamed(name: string): readonly ClassInfo[] {
    return this.memo('classes-by-name', () => {
      const byName = new Map<string, ClassInfo[]>();
      for (const cls of this.classes) {
        const list = byName.get(cls.name);
        if (list) list.push(cls);
        else byName.set(cls.name, [cls]);
      }
      return byName;
    }).get(name) ?? NO_CLASSES;
  }

  /** The first class of this file with that name. */
  classNamed(name: string): ClassInfo | undefined {
    return this.classesNamed(name)[0];
  }
}

const interestingCache = new NodeMemo<StatementNodes>();
const NO_CALLS: readonly Node[] = Object.freeze([]);
const NO_CLASSES: readonly ClassInfo[] = Object.freeze([]);

const nodeStart = (node: Node) => node.startIndex;

const targetsCache = new NodeMemo<{ assignments: Map<string, Node[]>; augmentedAssignments: Map<string, Node[]> }>();

/** The (augmented) assignments of one top-level statement by target (cached on it: they depend on its text alone). */
function statementTargets(statement: Node): { assignments: Map<string, Node[]>; augmentedAssignments: Map<string, Node[]> } {
  let targets = targetsCache.get(statement);
  if (!targets) {
    const nodes = statementNodes(statement);
    targets = { assignments: targetIndex(nodes.assignments), augmentedAssignments: targetIndex(nodes.augmentedAssignments) };
    targetsCache.set(statement, targets);
  }
  return targets;
}

/** Assignments by the dotted name of their left side, in document order. */
function targetIndex(assignments: readonly Node[]): Map<string, Node[]> {
  const byName = new Map<string, Node[]>();
  for (const assignment of assignments) {
    const name = dottedName(assignment.childForFieldName('left'));
    if (!name) continue;
    const list = byName.get(name);
    if (list) list.push(assignment);
    else byName.set(name, [assignment]);
  }
  return byName;
}

/** What memo() stores for a computed undefined. */
const MEMO_UNDEFINED = Symbol('undefined');

const moduleBindingsCache = new NodeMemo<ReadonlyArray<readonly [string, Definition]>>();
const calleeIndexCache = new NodeMemo<Map<string, Node[]>>();

/** The calls of one top-level statement by callee name (cached on the statement). */
function calleeIndex(statement: Node): Map<string, Node[]> {
  let index = calleeIndexCache.get(statement);
  if (!index) {
    index = new Map();
    for (const node of statementNodes(statement).calls) {
      const callee = calleeName(node);
      if (!callee) continue;
      const list = index.get(callee) ?? [];
      list.push(node);
      index.set(callee, list);
    }
    calleeIndexCache.set(statement, index);
  }
  return index;
}

/** The indexed nodes of one top-level statement (the statement included), by kind, each list in document order. */
/** The model's whole-file lists of indexed nodes (SemanticModel.nodesWithin). */
export type NodeListKind = 'calls' | 'assignments' | 'augmentedAssignments' | 'loops' | 'withStatements' | 'deleteStatements' | 'returnStatements';

interface StatementNodes {
  calls: Node[];
  assignments: Node[];
  augmentedAssignments: Node[];
  loops: Node[];
  withStatements: Node[];
  deleteStatements: Node[];
  returnStatements: Node[];
  /** Imports, classes and functions. */
  structure: Node[];
}

const moduleLevelCallsCache = new NodeMemo<Node[]>();

/**
 * What resolveLocalFunction reads of a call: `f(…)`, `self.m(…)` (with the function it is in), `obj.m(…)` (with the
 * receiver's dotted name), or none of these. Kept per call, which stays the same object while its statement is
 * unchanged: callersOf resolves every call by a name in each version, and reading each call's nodes and text again
 * cost a long script's every keystroke.
 */
type CalleeShape =
  | { kind: 'function'; name: string }
  | { kind: 'self'; method: string; owner: Node | undefined }
  | { kind: 'instance'; method: string; receiver: string }
  | { kind: 'other' };

const OTHER_CALLEE: CalleeShape = { kind: 'other' };
const calleeShapes = new NodeMemo<CalleeShape>();

function calleeShape(call: Node): CalleeShape {
  let shape = calleeShapes.get(call);
  if (!shape) {
    shape = OTHER_CALLEE;
    const fn = call.childForFieldName('function');
    if (fn?.type === 'identifier') shape = { kind: 'function', name: fn.text };
    else if (fn?.type === 'attribute') {
      const receiver = fn.childForFieldName('object');
      const method = fn.childForFieldName('attribute')?.text ?? '';
      if (receiver?.type === 'identifier' && receiver.text === 'self') {
        const owner = enclosingFunction(call);
        shape = { kind: 'self', method, owner: owner.type === 'function_definition' ? owner : undefined };
      } else if (receiver) shape = { kind: 'instance', method, receiver: dottedName(receiver) ?? '' };
    }
    calleeShapes.set(call, shape);
  }
  return shape;
}

/** The calls of a top-level statement that are not inside a function (enclosingFunction: the module), in document order. */
function moduleLevelCalls(statement: Node): Node[] {
  let calls = moduleLevelCallsCache.get(statement);
  if (!calls) {
    calls = statementNodes(statement).calls.filter((call) => enclosingFunction(call).type === 'module');
    moduleLevelCallsCache.set(statement, calls);
  }
  return calls;
}

/** The indexed nodes of one top-level statement, sorted by kind (cached on the statement). */
function statementNodes(statement: Node): StatementNodes {
  let nodes = interestingCache.get(statement);
  if (!nodes) {
    const found = statement.descendantsOfType(INTERESTING_TYPES);
    if (INTERESTING_TYPES.includes(statement.type)) found.unshift(statement);
    nodes = nodesByKind(found);
    interestingCache.set(statement, nodes);
  }
  return nodes;
}

/** A whole-file copy hands each statement's indexed nodes over as it copies them: no second walk of the tree. */
export const STATEMENT_NODES_COLLECTOR: StatementCollector = {
  types: new Set(INTERESTING_TYPES),
  statement: (statement, found) => interestingCache.set(statement, nodesByKind(found)),
};

/**
 * The nodes (in document order) that no container holds (`containers` in document order, nested ones after the
 * ones that hold them): the nodes and the outermost containers are read side by side.
 */
function outsideAll(nodes: readonly Node[], containers: readonly Node[]): Node[] {
  const outermost: Node[] = [];
  for (const container of containers) if (outermost.length === 0 || !contains(outermost[outermost.length - 1]!, container)) outermost.push(container);
  const result: Node[] = [];
  let next = 0;
  for (const node of nodes) {
    while (next < outermost.length && outermost[next]!.endIndex <= node.startIndex) next++;
    const container = outermost[next];
    if (!container || !contains(container, node)) result.push(node);
  }
  return result;
}

/** Indexed nodes (in document order) sorted by kind. */
function nodesByKind(found: readonly Node[]): StatementNodes {
  const nodes: StatementNodes = { calls: [], assignments: [], augmentedAssignments: [], loops: [], withStatements: [], deleteStatements: [], returnStatements: [], structure: [] };
  for (const node of found) {
    switch (node.type) {
      case 'call': nodes.calls.push(node); break;
      case 'assignment': nodes.assignments.push(node); break;
      case 'augmented_assignment': nodes.augmentedAssignments.push(node); break;
      case 'for_statement': case 'while_statement': nodes.loops.push(node); break;
      case 'with_statement': nodes.withStatements.push(node); break;
      case 'delete_statement': nodes.deleteStatements.push(node); break;
      case 'return_statement': nodes.returnStatements.push(node); break;
      case 'import_statement': case 'import_from_statement': case 'class_definition': case 'function_definition': nodes.structure.push(node); break;
      default: break;
    }
  }
  return nodes;
}

/** The container a for loop takes its elements from: `xs`, `xs.values()`, `xs.items()`, `enumerate(xs)`, `zip(xs, …)`. */
function elementSource(iterable: Node): { node: Node; keyed: boolean } | undefined {
  if (iterable.type === 'identifier' || iterable.type === 'attribute') return { node: iterable, keyed: false };
  if (iterable.type !== 'call') return undefined;
  const fn = iterable.childForFieldName('function');
  const name = calleeName(iterable);
  if (fn?.type === 'attribute' && (name === 'values' || name === 'items')) {
    const receiver = fn.childForFieldName('object');
    return receiver ? { node: receiver, keyed: name === 'items' } : undefined;
  }
  if (fn?.type === 'identifier' && (name === 'enumerate' || name === 'reversed' || name === 'zip')) {
    const first = callArguments(iterable).positional[0];
    return first && (first.type === 'identifier' || first.type === 'attribute') ? { node: first, keyed: name === 'enumerate' } : undefined;
  }
  return undefined;
}

/** `x.item()`, `float(x)`, `x.tolist()`: a return value that is a plain number, whatever it was computed from. */
function isNumberConversion(node: Node): boolean {
  if (node.type !== 'call') return false;
  const name = calleeName(node);
  const fn = node.childForFieldName('function');
  return (fn?.type === 'attribute' && (name === 'item' || name === 'tolist' || name === 'numpy' || name === 'detach')) ||
    (fn?.type === 'identifier' && (name === 'float' || name === 'int' || name === 'bool' || name === 'str' || name === 'len'));
}

/** An expression whose value holds no graph whatever it reads: a number conversion, a comparison, argmax… */
function isDetachedExpression(node: Node): boolean {
  if (node.type === 'comparison_operator' || node.type === 'integer' || node.type === 'float') return true;
  if (node.type === 'parenthesized_expression') return children(node).every(isDetachedExpression);
  if (node.type !== 'call') return false;
  const name = calleeName(node) ?? '';
  const fn = node.childForFieldName('function');
  return isNumberConversion(node) || (fn?.type === 'attribute' && DETACHING_METHODS.has(name)) || (fn?.type === 'identifier' && DETACHING_FUNCTIONS.has(name));
}

/** At most this many changed top-level statements are spliced into the previous model (deriveFrom). */
const MAX_DERIVED_STATEMENTS = 16;

/** What deriveFrom changed, as patchedCallers reads it: the top-level statements, their functions, their classes (before, now). */
interface CallersChange {
  beforeChanged: readonly Node[];
  nowChanged: readonly Node[];
  oldFunctions: readonly FunctionInfo[];
  newFunctions: readonly FunctionInfo[];
  classPairs: ReadonlyArray<readonly [Node, Node]>;
}

/** What a function definition says by itself (its class is filled in by the model). */
function functionInfoOf(node: Node): FunctionInfo {
  const decorators: Node[] = [];
  if (node.parent?.type === 'decorated_definition') {
    for (const child of children(node.parent)) if (child.type === 'decorator') decorators.push(child);
  }
  return { node, name: node.childForFieldName('name')?.text ?? '', decorators, body: node.childForFieldName('body') };
}

/** Fills `target` with `old`, its `removedCount` items from `at` replaced by the items of `parts`, in order. */
interface StatementIndex<T> {
  ofStatement: (model: SemanticModel, statement: Node) => ReadonlyMap<string, readonly T[]>;
  position: (entry: T) => number;
  byName: ReadonlyMap<string, readonly T[]>;
}

/**
 * The next version's index: the names the changed statements had or have get their list with the removed
 * statements' entries (found after `boundary`, where the leading unchanged statements end) replaced by the added
 * ones'; every other name keeps its list (its entries moved in place).
 */
function deriveIndex<T>(index: StatementIndex<T>, model: SemanticModel, removed: readonly Node[], added: readonly Node[], boundary: number): StatementIndex<T> {
  const removedEntries = removed.map((statement) => index.ofStatement(model, statement));
  const addedEntries = added.map((statement) => index.ofStatement(model, statement));
  const byName = new LayeredMap(index.byName);
  const touched = new Set<string>();
  for (const entries of [...removedEntries, ...addedEntries]) for (const name of entries.keys()) touched.add(name);
  for (const name of touched) {
    const list = index.byName.get(name) ?? [];
    let removedCount = 0;
    for (const entries of removedEntries) removedCount += entries.get(name)?.length ?? 0;
    const merged: T[] = [];
    spliceInto(merged, list, lowerBoundBy(list, boundary, index.position), removedCount, addedEntries.map((entries) => entries.get(name) ?? []));
    if (merged.length > 0) byName.set(name, merged);
    else byName.delete(name);
  }
  return { ...index, byName };
}

function spliceInto<T>(target: T[], old: readonly T[], at: number, removedCount: number, parts: ReadonlyArray<readonly T[]>): void {
  for (let i = 0; i < at; i++) target.push(old[i]!);
  for (const part of parts) for (const item of part) target.push(item);
  for (let i = at + removedCount; i < old.length; i++) target.push(old[i]!);
}

/** `foo(...)`, also through `.to(device)` chains: `Model().to(device)` → the `Model()` call. */
function unwrapCall(node: Node): Node | undefined {
  if (node.type !== 'call') return undefined;
  const fn = node.childForFieldName('function');
  if (fn?.type === 'attribute') {
    const method = fn.childForFieldName('attribute')?.text ?? '';
    const receiver = fn.childForFieldName('object');
    if (/^(to|cuda|half|float|bfloat16|train|eval|requires_grad_)$/.test(method) && receiver?.type === 'call') {
      return unwrapCall(receiver) ?? node;
    }
  }
  return node;
}

/** What a qualified callee's name alone says about the value it returns (see learnRole). */
interface CalleeKind {
  tail: string;
  /** Builds or loads a model, by its name alone. */
  model: boolean;
  /** A module method that returns its receiver (`.to(device)`, `.cuda()`): a model if the receiver is one. */
  moduleMethod: boolean;
  /** Otherwise: a loss, an optimizer or a gradient scaler. */
  other: 'loss' | 'optimizer' | 'scaler' | undefined;
}

// The same few callees recur in every version of a document: their kinds are computed once.
const calleeKinds = new Map<string, CalleeKind>();

function calleeKind(qualified: string): CalleeKind {
  let kind = calleeKinds.get(qualified);
  if (kind) return kind;
  const tail = qualified.split('.').pop() ?? '';
  const model =
    // `AutoModel.from_pretrained(…)` loads a model; `AutoTokenizer.from_pretrained(…)` and configs do not.
    // A diffusers/transformers pipeline runs its models under no_grad itself: not a model here.
    (/from_pretrained|from_config|create_model|get_peft_model|prepare_model/.test(tail) && !/(Tokenizer|Processor|FeatureExtractor|Config|Extractor|Pipeline)\w*\.\w+$/.test(qualified)) ||
    /^torchvision\.models\./.test(qualified) || /^timm\.(create_model$|models\.)/.test(qualified) || /^torch\.compile$/.test(qualified) ||
    /(DistributedDataParallel|DataParallel|FullyShardedDataParallel|DDP|FSDP)$/.test(tail) ||
    (/^torch\.nn\.[A-Z]/.test(qualified) && !/Loss$/.test(tail)) ||
    /^(get|build|create|make|load|init)_?\w*(model|net|network)$/i.test(tail);
  const moduleMethod = /^(to|cuda|half|float|bfloat16|train|eval)$/.test(tail);
  const other = /Loss$/.test(tail) && /^torch\.nn\./.test(qualified) ? 'loss'
    : /^torch\.optim\.[A-Z]/.test(qualified) || /(AdamW|Adam|SGD|Adafactor|Lion|RMSprop|Adagrad|LAMB|AdamW8bit|Adam8bit)$/.test(tail) || /create_optimizer/.test(tail) ? 'optimizer'
      : /GradScaler$/.test(tail) ? 'scaler' : undefined;
  kind = { tail, model, moduleMethod, other };
  // Bounded: a long session of typing must not grow it without end.
  if (calleeKinds.size > 10_000) calleeKinds.clear();
  calleeKinds.set(qualified, kind);
  return kind;
}

interface RoleCandidate {
  /** The name assigned (`model`, `self.net`). */
  target: string;
  /** The dotted callee of the call assigned, before import aliases are followed (`nn.Linear`). */
  callee: string;
  /** The receiver of a `.to(device)`-style chain's innermost call, if it is a method call. */
  receiver: Node | undefined;
  /** The kind of the callee when its head resolved to `resolved` (see learnRole). */
  kind?: { resolved: string | undefined; kind: CalleeKind };
}

const classSyntaxCache = new NodeMemo<{ name: string; bases: readonly Node[]; hasForward: boolean }>();

/** What a class definition says by itself: its name, its base expressions, whether it defines forward (cached). */
function classSyntax(node: Node): { name: string; bases: readonly Node[]; hasForward: boolean } {
  let syntax = classSyntaxCache.get(node);
  if (!syntax) {
    const superclasses = node.childForFieldName('superclasses');
    syntax = {
      name: node.childForFieldName('name')?.text ?? '',
      bases: superclasses ? children(superclasses) : [],
      hasForward: (node.childForFieldName('body')?.namedChildren ?? []).some((child) => {
        const fn = child?.type === 'decorated_definition' ? child.childForFieldName('definition') : child;
        return fn?.type === 'function_definition' && fn.childForFieldName('name')?.text === 'forward';
      }),
    };
    classSyntaxCache.set(node, syntax);
  }
  return syntax;
}

const statementRoleCandidatesCache = new NodeMemo<RoleCandidate[]>();

/** The role candidates of a top-level statement's assignments, in document order (cached on the statement). */
function statementRoleCandidates(statement: Node, nodes: StatementNodes = statementNodes(statement)): RoleCandidate[] {
  let candidates = statementRoleCandidatesCache.get(statement);
  if (!candidates) {
    candidates = nodes.assignments.flatMap(roleCandidates);
    statementRoleCandidatesCache.set(statement, candidates);
  }
  return candidates;
}

/**
 * What an assignment may teach about roles, read from its text: kept with its statement's candidates (its nodes
 * move between versions only with their statement, see statementRoleCandidates).
 */
function roleCandidates(assignment: Node): RoleCandidate[] {
  const candidates: RoleCandidate[] = [];
  const left = assignment.childForFieldName('left');
  const right = assignment.childForFieldName('right');
  // Pairs by index, not destructured: every assignment of a document is read here before V8 optimises this, and
  // destructuring a pair then steps an iterator that allocates.
  for (const pair of left && right ? pairTargets(left, right) : []) {
    const target = pair[0];
    const value = pair[1];
    // The value first: most assignments bind no call, and then the target's name need not be spelled out.
    const call = unwrapCall(value);
    const callee = call ? dottedName(call.childForFieldName('function')) : undefined;
    if (!call || !callee) continue;
    const name = dottedName(target);
    if (name) candidates.push({ target: name, callee, receiver: callReceiver(call) });
  }
  return candidates;
}

const SEQUENCE_TYPES = new Set(['pattern_list', 'tuple_pattern', 'tuple', 'expression_list', 'list_pattern']);

/** Target/value pairs of an assignment: `a, b = f(), g()` pairs each name with its value; `a = f()` is one pair. */
function pairTargets(left: Node, right: Node): Array<[Node, Node]> {
  const sequence = (node: Node) => SEQUENCE_TYPES.has(node.type);
  if (sequence(left)) {
    if (!sequence(right)) return [];
    const targets = children(left);
    const values = children(right);
    return targets.length === values.length ? targets.map((target, i) => [target, values[i]!] as [Node, Node]) : [];
  }
  return left.type === 'identifier' || left.type === 'attribute' ? [[left, right]] : [];
}

/** Words of a range step that is a batch size: `range(0, n, batch_size)`, `range(0, len(x), self.micro_bs)`. */
const BATCH_STRIDE_WORDS = new Set(['batch', 'bs', 'bsz', 'mb', 'mbs', 'microbatch', 'minibatch', 'chunk']);

function isBatchStride(step: Node | undefined): boolean {
  const name = dottedName(step);
  return !!name && nameWords(name.split('.').pop()!).some((word) => BATCH_STRIDE_WORDS.has(word));
}

/**
 * Whether iterating `node` yields batches: a loader-like name (`train_loader`, `self.val_dl`, `loaders["train"]`),
 * also wrapped (`enumerate(loader)`, `tqdm(dl)`, `zip(a_loader, b_loader)`), or a range stepped by a batch size.
 * `range(cfg.train.epochs)` counts epochs.
 */
function yieldsData(node: Node): boolean {
  switch (node.type) {
    case 'identifier':
    case 'attribute':
      return looksLikeDataName(dottedName(node)?.split('.').pop() ?? '');
    case 'subscript':
      return !!node.childForFieldName('value') && yieldsData(node.childForFieldName('value')!);
    case 'call': {
      const name = calleeName(node);
      // `range(epochs)` counts epochs; `range(0, n, micro_batch)` steps through the data one (micro-)batch at a time.
      if (name === 'range') return isBatchStride(callArguments(node).positional[2]);
      // A generator named for its batches: `batches(X, y, bs)`, `iterate_minibatches(...)`, `get_batch(...)`.
      if (name && looksLikeDataName(name)) return true;
      // `iter(loader)`, `enumerate(loader)`, `tqdm(loader, desc=...)`, `loader.items()`-style wrappers.
      const receiver = callReceiver(node);
      if (receiver && yieldsData(receiver)) return true;
      return callArguments(node).positional.some(yieldsData);
    }
    case 'parenthesized_expression':
      return children(node).some(yieldsData);
    default:
      return false;
  }
}
