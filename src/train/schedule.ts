/**
 * The learning-rate schedule of a trained role, read from the config. Its own module because the
 * trainer follows it and checkpoints record it, and neither should import the other for it.
 */
import type { AgenticConfig } from '../config/schema';
import type { ScheduleOptions } from '../model/optim';

export function learningRateSchedule(config: AgenticConfig, role: 'actor_train' | 'critic'): ScheduleOptions {
  const args = config[role].training_args;
  return {
    type: args.lr_scheduler_type,
    peak: args.learning_rate,
    totalSteps: config.max_steps,
    warmupSteps: args.warmup_steps || Math.round(args.warmup_ratio * config.max_steps),
  };
}
