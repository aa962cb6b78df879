import { refusingOwner, type DomainOwners } from '../entities/owner';
import { INPUT_ASPECT, RESULT_ASPECT } from './apply-record';

/** The record of an apply job is written only by the catalog: a generic write of its aspects is refused. */
export function applyOwners(): DomainOwners {
  return {
    aspects: [
      refusingOwner(
        'apply jobs',
        (_type, aspect) => aspect === INPUT_ASPECT || aspect === RESULT_ASPECT,
        'an apply job is written only by catalog.properties.applyToMatches and cancelApply',
      ),
    ],
  };
}
