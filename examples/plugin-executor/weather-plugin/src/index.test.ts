import { testExecutor } from '@switchyard/registry/testing';
import { weather } from './index';

testExecutor({ executor: weather, sample: { city: 'Oslo' }, invalid: [{ city: 'Atlantis' }, { town: 'Oslo' }] });
