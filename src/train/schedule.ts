/**
 * What the config schedules over the steps: the learning rate of a trained role (the trainer
 * follows it and checkpoints record it, and neither should import the other for it) and the steps
 * that validate (every rollout source asks).
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

/** Whether the step about to start validates first: every eval_steps steps, step 0 only with val_before_train. */
export function validatesBefore(config: AgenticConfig, step: number): boolean {
  return config.eval_steps > 0 && step % config.eval_steps === 0 && (step > 0 || config.val_before_train);
}
