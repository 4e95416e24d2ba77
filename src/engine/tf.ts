/**
 * The one tfjs import of the engine. tfjs-core alone leaves chained ops (`x.add(y)`) and the
 * gradient registrations out; importing them here makes every module that imports `tf` from
 * this file see a complete library, also inside the compiled binary.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
import '@tensorflow/tfjs-core/dist/register_all_gradients';

export { tf };
