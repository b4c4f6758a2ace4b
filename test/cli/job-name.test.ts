import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jobNameOf } from '../../src/cli/profile-action.js';

test('the job is named after its script, past launcher options and their values', () => {
  assert.equal(jobNameOf(['torchrun', '--nproc_per_node', '2', 'main.py', '-a', 'resnet18', '/data']), 'main.py');
  assert.equal(jobNameOf(['/usr/bin/python3', '/src/examples/train.py', '--epochs', '1']), 'train.py');
  assert.equal(jobNameOf(['python', '-m', 'torch.distributed.run', '--standalone', 'train.py']), 'train.py');
  // The command itself may be the script; an option's inline value is not.
  assert.equal(jobNameOf(['./train.py', '/data/imagenet']), 'train.py');
  assert.equal(jobNameOf(['python', '--config=cfg.py', 'train.py']), 'train.py');
  // No script: the first operand, else the command itself.
  assert.equal(jobNameOf(['./train', 'imagenet', '--epochs', '1']), 'imagenet');
  assert.equal(jobNameOf(['/opt/bin/trainer', '--fast']), 'trainer');
});
