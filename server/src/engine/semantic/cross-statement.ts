// What one top-level definition tells the rules that read the whole file (the second rule set): whether it makes
// the script distributed, which rank runs the functions it calls, and so on. Incremental analysis compares these
// facts before and after an edit; when they are equal, the findings of every other statement still hold.
import type { Node } from '../parser';
import { calleeName, children, contains } from '../syntax';
import { deviceNamesWithin, indexlessPlacementsWithin } from './devices';
import { devicePlacingCalls, distributedMarkers, onlyRankZeroRuns, setDeviceCalls } from './distributed';
import { freezesWithin, isAliasForm, optimizers, registeredChildren, trainingLoopForwards } from './parameters';
import type { SemanticModel } from './model';


function localClassNames(model: SemanticModel): Set<string> {
  return model.memo('local-class-names', () => new Set(model.classes.map((cls) => cls.name)));
}

/** The facts of one definition statement that rules of other statements read. */
export function crossStatementFacts(model: SemanticModel, statement: Node): unknown[] {
  const facts: unknown[] = [];
  // OOM110: a distributed script; only rank 0 calls a function of another statement.
  facts.push(['distributed', distributedMarkers(model, statement).length > 0]);
  const calls = model.nodesWithin('calls', statement);
  for (const call of calls) {
    const callee = model.resolveLocalFunction(call);
    if (!callee || contains(statement, callee.node)) continue;
    facts.push(['rank0', callee.name, onlyRankZeroRuns(model, call)]);
  }
  // OOM111: set_device, a framework that places each process, and whether the statement places work on bare "cuda"
  // (the finding goes to the first such place in the file).
  facts.push(['set-device', setDeviceCalls(model, statement).length > 0, devicePlacingCalls(model, statement).length > 0]);
  facts.push(['indexless', indexlessPlacementsWithin(model, statement).length > 0, deviceNamesWithin(model, statement)]);
  // OOM112: which DataLoaders have workers and what they run (the datasets, collate_fn and worker_init_fn they are
  // given, made or bound here), and the base classes a Dataset inherits __getitem__ from.
  for (const call of calls) {
    const name = calleeName(call);
    if (name === 'DataLoader' || name === 'partial' || (name && localClassNames(model).has(name))) facts.push(['call', call.text]);
  }
  // (and, for OOM114, the submodules a model class registers: together the optimizers may cover them all)
  for (const cls of model.classesWithin(statement)) facts.push(['class', cls.name, cls.baseNames, registeredChildren(model, cls)]);
  // OOM113/OOM114: the optimizers and what they receive, the freezes, the models run through functional_call, the
  // forwards of training loops, the names given to models (aliases), the parameters callers bind, and what
  // functions hand back.
  const sorted = (names: Iterable<string>) => [...names].sort();
  for (const optimizer of optimizers(model, statement)) {
    facts.push(['optimizer', optimizer.sources.map((source) => sorted(source.names)), optimizer.unknown, optimizer.filtered]);
  }
  const frozen = freezesWithin(model, statement);
  facts.push(['freezes', sorted(frozen.names), frozen.unknown]);
  for (const call of calls) {
    const name = calleeName(call);
    if (name === 'functional_call' || model.resolveLocalFunction(call)) facts.push(['call', call.text]);
  }
  for (const forward of trainingLoopForwards(model, statement)) {
    facts.push(['forward', sorted(forward.names.names), forward.names.unknown, model.isNoGrad(forward.call)]);
  }
  for (const assignment of model.nodesWithin('assignments', statement)) {
    const right = assignment.childForFieldName('right');
    if (right && isAliasForm(right)) facts.push(['alias', assignment.text]);
  }
  for (const returned of model.nodesWithin('returnStatements', statement)) {
    const value = children(returned)[0];
    if (value && isAliasForm(value)) facts.push(['return', returned.text]);
  }
  // OOM115: whether the script trains or evaluates (a batch loop, a loop that runs a model, a trainer).
  facts.push(['trains', model.trainsOrEvaluatesWithin(statement)]);
  return facts;
}
